"""Command-line entry point."""

import sys


def parse_args(argv):
    opts = {"verbose": False, "output": None}
    for arg in argv:
        if arg == "-v":
            opts["verbose"] = True
        elif arg.startswith("--output="):
            opts["output"] = arg.split("=", 1)[1]
    return opts


def main():
    opts = parse_args(sys.argv[1:])
    if opts["verbose"]:
        print("verbose mode", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
