"""``zcspec spec``: render the reviewed spec document, check that it is current, or check an observation file.

    zcspec spec                         # write docs/SPEC.md, docs/SPEC.html and docs/spec/*.svg
    zcspec spec --check                 # exit 1 if any of them differs from what would be written
    zcspec spec --observation plan.json # check a plan/model-file/load/execution JSON against the catalogue
"""
from __future__ import annotations

import json
import os

from zcspec.spec.check import check
from zcspec.spec.document import HTML, MARKDOWN, PICTURES, render_all, root_dir
from zcspec.spec.errors import ObservationConsistencyError, ObservationFormatError, SpecError
from zcspec.spec.observables import OBSERVATION_KINDS, from_data
from zcspec.spec.observables.plan_contract import plan_from_contract


def configure(parser) -> None:
    parser.add_argument("--out", default=None, metavar="FILE.md", help=f"Markdown output (default {MARKDOWN})")
    parser.add_argument("--html", default=None, metavar="FILE.html", help=f"HTML output (default {HTML})")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 if the files on disk differ from what would be rendered")
    parser.add_argument("--observation", metavar="FILE.json",
                        help="instead of rendering, check this observation against every applicable invariant")
    parser.add_argument("--kind", choices=sorted(OBSERVATION_KINDS), help="the observation's kind (default: guessed)")
    parser.add_argument("--json", action="store_true", help="with --observation: print the report as JSON")


def run(args) -> int:
    if args.observation:
        return _check_observation(args)
    root = root_dir()
    targets = _targets(root, args)
    stale = [path for path, text in targets.items() if _read(path) != text]
    if args.check:
        for path in stale:
            print(f"stale: {os.path.relpath(path)} (run `zcspec spec` to regenerate)")
        return 1 if stale else 0
    for path in stale:
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(targets[path])
    print(f"wrote {len(stale)} file(s), {len(targets) - len(stale)} already current")
    return 0


def _targets(root: str, args) -> dict[str, str]:
    """Absolute output path -> text; pictures go to spec/ beside the Markdown file, where its links point."""
    md = os.path.abspath(args.out) if args.out else os.path.join(root, MARKDOWN)
    html = os.path.abspath(args.html) if args.html else os.path.join(root, HTML)
    out = {}
    for rel, text in render_all(root).items():
        if rel == MARKDOWN:
            out[md] = text
        elif rel == HTML:
            out[html] = text
        else:
            out[os.path.join(os.path.dirname(md), "spec", os.path.relpath(rel, PICTURES))] = text
    return out


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except FileNotFoundError:
        return None


def guess_kind(data) -> str:
    """The observation kind of parsed JSON, from its top-level keys."""
    if isinstance(data, dict):
        for kind, keys in (("api_call", {"runtime", "entry", "outcome"}), ("plan", {"order", "tensors"}),
                           ("model_file", {"header"}),
                           ("execution", {"load"}), ("load", {"options"}),
                           ("input_file", {"format", "outcome", "nodes"})):
            if keys <= set(data):
                return kind
    raise SpecError("cannot tell the observation's kind from its keys; pass --kind")


def _check_observation(args) -> int:
    try:
        with open(args.observation, encoding="utf-8") as f:
            data = json.load(f)
    except FileNotFoundError as e:
        raise SpecError(f"{args.observation}: no such file") from e
    except json.JSONDecodeError as e:
        raise ObservationFormatError(f"not JSON: {e}", file=args.observation) from e
    kind = args.kind or guess_kind(data)
    try:
        obs = plan_from_contract(data) if kind == "plan" else from_data(OBSERVATION_KINDS[kind], data)
        report = check(obs)
    except (ObservationFormatError, ObservationConsistencyError) as e:
        raise e.in_file(args.observation) from e
    print(report.to_json() if args.json else report)
    return 0 if report.ok else 1
