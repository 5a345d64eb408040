def main():
    17|    opts = parse_args(sys.argv[1:])
