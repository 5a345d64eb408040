def main():
    opts = parse_args(sys.argv)
