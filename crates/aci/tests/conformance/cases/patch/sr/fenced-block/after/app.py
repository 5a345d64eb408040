import os
import sys


def load_config(path):
    with open(path, encoding="utf-8") as fh:
        data = fh.read()
    return parse(data)


def parse(text):
    result = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        key, _, value = line.partition("=")
        result[key.strip()] = value.strip()
    return result


def main():
    cfg = load_config(sys.argv[1])
    print(cfg)


if __name__ == "__main__":
    main()
