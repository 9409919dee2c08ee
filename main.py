import sys

from app.main import run

if __name__ == "__main__":
    run(sys.argv[1:])
