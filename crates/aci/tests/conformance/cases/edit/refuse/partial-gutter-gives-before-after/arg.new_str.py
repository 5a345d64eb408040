def main(argv=None):
    opts = parse_args(argv or sys.argv[1:])
