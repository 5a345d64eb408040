"""The command line: `tasks add TITLE`, `tasks list`."""

import argparse
import sys

from tasks.models import Priority, sort_tasks, task
from tasks.storage import Store, load, parse_config

DEFAULT_PATH = "tasks.txt"


def build_parser():
    parser = argparse.ArgumentParser(prog="tasks")
    parser.add_argument("--config", default=None)
    sub = parser.add_subparsers(dest="command", required=True)
    add = sub.add_parser("add")
    add.add_argument("title")
    add.add_argument("--priority", default="normal")
    sub.add_parser("list")
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    path = DEFAULT_PATH
    if args.config:
        with open(args.config) as fh:
            path = parse_config(fh.read()).get("path", DEFAULT_PATH)
    store = load(path)

    def show(items):
        for item in sort_tasks(items):
            print(item.label)

    if args.command == "add":
        store.tasks.append(task(args.title, Priority.parse(args.priority)))
        store.save()
    else:
        show(store.tasks)
    return 0


if __name__ == "__main__":
    sys.exit(main())
