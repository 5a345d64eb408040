def main():
    opts = parse_args(sys.argv[2:])
