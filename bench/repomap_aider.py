#!/usr/bin/env python3
"""Aider's repo map on a tree, timed: the aider half of bench/repomap.sh.

Builds aider's own RepoMap (aider.repomap.RepoMap) and asks it for a map the way an aider
session does for a task message with no files in the chat: the task becomes the current user
message and aider's own Coder.get_repo_map runs on it (get_file_mentions,
get_ident_mentions, get_ident_filename_matches, then RepoMap.get_repo_map with
chat_files=set() and every file as other_files, and aider's fallbacks). Only two things are
stood in for:
  * the file list: aider takes `git ls-files`; here it is the list given by --files-from
    (bench/repomap.sh passes `rg --files --no-require-git`, the same ignore rules as slmcode's
    walker), or else every non-hidden file under --root;
  * the model: an object whose token_count is tiktoken cl100k_base (aider's Model would ask
    litellm), and no context window, so the map budget is exactly --tokens (with an empty chat
    and a model whose context size it knows, aider multiplies the budget by map_mul_no_files=8;
    pass --context-window to get that).

Phases, all in this one process (imports are not timed; aider imports once per session):
  cold        the tags cache (ROOT/.aider.tags.cache.v*) removed, then the first map, for
              task 1: parses every file (aider's "Initial repo scan"). Once.
  index warm  a new RepoMap (cache on disk), RepoMap.get_tags for every file: what each map
              spends loading and re-validating the tags (an mtime per file, a sqlite read).
  map         for each task, a new RepoMap on the warm cache and Coder.get_repo_map: what the
              first map of a new aider session costs on an indexed tree. --runs times.

Writes OUT_DIR/aider-<n>.md (the map as the model gets it, aider's prefix included) and
OUT_DIR/aider.json (times in seconds, per-task mentions). Needs TIKTOKEN_CACHE_DIR holding
cl100k_base (bench/repomap.sh fills it from tiktoken-rs's sources) and
LITELLM_LOCAL_MODEL_COST_MAP=True; nothing here touches the network.

Usage: repomap_aider.py --root TREE --out-dir DIR [--tokens 1024] [--runs 3]
                        [--files-from LIST] [--skip-cold] [--context-window N] TASK...
"""

import argparse
import json
import os
import resource
import shutil
import statistics
import sys
import time


def die(msg):
    print(f"repomap_aider: error: {msg}", file=sys.stderr)
    sys.exit(1)


def say(msg):
    print(f"==> aider: {msg}", file=sys.stderr, flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", required=True)
    ap.add_argument("--out-dir", required=True)
    ap.add_argument("--tokens", type=int, default=1024)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--files-from", help="file with one path per line, relative to --root")
    ap.add_argument("--skip-cold", action="store_true", help="keep the tags cache; no cold phase")
    ap.add_argument("--context-window", type=int, default=0,
                    help="the model's max input tokens (0: none, the budget is --tokens)")
    ap.add_argument("tasks", nargs="+")
    args = ap.parse_args()

    root = os.path.realpath(args.root)  # aider resolves paths (utils.safe_abs_path)
    if not os.path.isdir(root):
        die(f"--root {args.root} is not a directory")
    os.makedirs(args.out_dir, exist_ok=True)

    # Offline: tiktoken would download cl100k_base, litellm its model list.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    cache = os.environ.get("TIKTOKEN_CACHE_DIR")
    if not cache or not os.path.isfile(os.path.join(cache, "9b5ad71b2ce5302211f9c61530b329a4922fc6a4")):
        die("TIKTOKEN_CACHE_DIR must hold cl100k_base.tiktoken named "
            "9b5ad71b2ce5302211f9c61530b329a4922fc6a4 (sha1 of its URL); bench/repomap.sh sets it up")

    # aider's console and spinner print to stdout; keep stdout for nothing but errors.
    real_stdout = sys.stdout
    sys.stdout = sys.stderr
    try:
        import tiktoken
        import aider
        from aider.coders.base_coder import Coder
        from aider.coders.base_prompts import CoderPrompts
        from aider.io import InputOutput
        from aider.repomap import RepoMap
    except Exception as e:  # noqa: BLE001
        sys.stdout = real_stdout
        die(f"cannot import aider ({e!r}); is this the aider venv's python?")

    enc = tiktoken.get_encoding("cl100k_base")

    class Cl100k:
        """Stands in for aider.models.Model: only token_count is used by RepoMap."""

        name = "cl100k-stand-in"

        def token_count(self, text):
            if not isinstance(text, str):
                text = json.dumps(text)
            return len(enc.encode(text, disallowed_special=()))

    # ---- the file list (aider: git ls-files) ------------------------------------------------
    if args.files_from:
        with open(args.files_from, encoding="utf-8", errors="surrogateescape") as f:
            rel_files = sorted({line.rstrip("\n") for line in f if line.strip()})
    else:
        rel_files = []
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            for fn in filenames:
                if not fn.startswith("."):
                    rel_files.append(os.path.relpath(os.path.join(dirpath, fn), root))
        rel_files.sort()
    rel_files = [f[2:] if f.startswith("./") else f for f in rel_files]
    if not rel_files:
        die(f"no files under {root}")
    say(f"aider {aider.__version__}, {len(rel_files)} files, map budget {args.tokens} tokens")

    io = InputOutput(pretty=False, yes=True, fancy_input=False, chat_history_file=None,
                     input_history_file=None, root=root)
    model = Cl100k()

    class Session:
        """The part of aider's Coder that get_repo_map uses, with aider's own methods."""

        get_repo_map = Coder.get_repo_map
        get_cur_message_text = Coder.get_cur_message_text
        get_file_mentions = Coder.get_file_mentions
        get_ident_mentions = Coder.get_ident_mentions
        get_ident_filename_matches = Coder.get_ident_filename_matches
        get_inchat_relative_files = Coder.get_inchat_relative_files
        get_addable_relative_files = Coder.get_addable_relative_files
        get_all_abs_files = Coder.get_all_abs_files
        get_rel_fname = Coder.get_rel_fname
        abs_root_path = Coder.abs_root_path

        def __init__(self, task):
            self.root = root
            self.abs_fnames = set()
            self.abs_read_only_fnames = set()
            self.abs_root_path_cache = {}
            self.cur_messages = [dict(role="user", content=task)]  # as Coder.send_message
            self.repo_map = RepoMap(
                args.tokens, root, model, io, CoderPrompts.repo_content_prefix, False,
                args.context_window or None,
            )

        def get_all_relative_files(self):  # aider: self.repo.get_tracked_files()
            return rel_files

    def one_map(task):
        """A new session's first map for TASK: (seconds, map text, session)."""
        s = Session(task)
        s.get_all_abs_files()  # resolve paths outside the timing, as aider's file list is cached
        t0 = time.perf_counter()
        text = s.get_repo_map()
        return time.perf_counter() - t0, text or "", s

    def save(i, text):
        path = os.path.join(args.out_dir, f"aider-{i}.md")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return path

    result = dict(aider_version=aider.__version__, root=root, files=len(rel_files),
                  tokens=args.tokens, context_window=args.context_window, runs=args.runs,
                  tasks=[])

    # ---- cold -------------------------------------------------------------------------------
    cache_dir = os.path.join(root, RepoMap.TAGS_CACHE_DIR)
    if not args.skip_cold:
        for name in os.listdir(root):
            if name.startswith(".aider.tags.cache"):
                shutil.rmtree(os.path.join(root, name))
        say(f"cold: first map with no {RepoMap.TAGS_CACHE_DIR} (parses every file; slow)")
        secs, text, _ = one_map(args.tasks[0])
        if not text.strip():
            die("the cold map is empty")
        result["cold"] = secs
        say(f"cold: {secs:.1f} s")
    elif not os.path.isdir(cache_dir):
        die(f"--skip-cold but there is no {cache_dir}")

    # ---- index warm -------------------------------------------------------------------------
    times = []
    for r in range(args.runs):
        rm = RepoMap(args.tokens, root, model, io)
        t0 = time.perf_counter()
        ntags = 0
        for rel in rel_files:
            ntags += len(rm.get_tags(os.path.join(root, rel), rel))
        times.append(time.perf_counter() - t0)
    result["index_warm"] = times
    result["tags"] = ntags
    say(f"index warm: {statistics.mean(times):.2f} s ({ntags} tags)")

    # ---- maps -------------------------------------------------------------------------------
    for i, task in enumerate(args.tasks, 1):
        times = []
        for r in range(args.runs):
            secs, text, s = one_map(task)
            times.append(secs)
        if not text.strip():
            die(f"empty map for task {i}: {task}")
        text_msg = s.get_cur_message_text()
        idents = s.get_ident_mentions(text_msg)
        fnames = s.get_file_mentions(text_msg) | s.get_ident_filename_matches(idents)
        path = save(i, text)
        result["tasks"].append(dict(task=task, map=path, times=times,
                                    mentioned_fnames=sorted(fnames),
                                    mentioned_idents=sorted(w for w in idents if w)))
        say(f"map {i}: {statistics.mean(times):.2f} s, {len(text)} chars -> {path}")

    result["max_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    with open(os.path.join(args.out_dir, "aider.json"), "w", encoding="utf-8") as f:
        json.dump(result, f, indent=1)
    sys.stdout = real_stdout


if __name__ == "__main__":
    main()
