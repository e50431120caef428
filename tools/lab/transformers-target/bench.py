"""The lab's benchmark: N generate requests (after one warm-up), a line each, and with --out a
JSONL record each (the server's figures: ms_per_token, tok_s, accept_len, verify_ms)."""

from __future__ import annotations

import argparse
import json
import urllib.request


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("--requests", type=int, default=6)
    parser.add_argument("--prompt-len", type=int, default=192)
    parser.add_argument("--new-tokens", type=int, default=32)
    parser.add_argument("--out", help="a JSONL file, written anew")
    args = parser.parse_args()
    records = []
    for i in range(args.requests + 1):
        body = json.dumps({"prompt_len": args.prompt_len, "new_tokens": args.new_tokens,
                           "seed": i}).encode()
        request = urllib.request.Request(args.url + "/generate", data=body,
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=600) as reply:
            result = json.loads(reply.read())
        if i:  # the first one warms up
            records.append(result)
            print(f"ms_per_token: {result['ms_per_token']:.4f} ({result['tokens']} tokens, "
                  f"{result['accept_len']:.2f} per verify cycle)")
    if args.out:
        with open(args.out, "w") as out:
            out.writelines(json.dumps(record) + "\n" for record in records)


if __name__ == "__main__":
    main()
