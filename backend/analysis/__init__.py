"""The whole answer for one program: propagation's result and the records of the steps
after it (the compile, the host layout, the pricing, the GSPMD comparison), side by side."""
