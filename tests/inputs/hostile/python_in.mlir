print("not a module")
