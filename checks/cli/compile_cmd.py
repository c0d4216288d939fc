"""``zcspec compile MODEL -o FILE.zcm [--soc NAME] [--strategy S] [--no-reuse] [--offline] [--feature-base-refreshable]``."""
from __future__ import annotations

import sys

from zcspec.checks.cli.arguments import add_model_arguments
from zcspec.checks.errors import UsageError
from zcspec.checks.models import compile_file, load_graph
from zcspec.impl.compiler.model_file.encode import encode
from zcspec.impl.compiler.options import CompileOptions
from zcspec.impl.platform.soc import PROFILES


def configure(parser) -> None:
    add_model_arguments(parser)
    parser.add_argument("-o", "--output", required=True, metavar="FILE.zcm", help="where to write the model file")
    parser.add_argument("--soc", default="ascend910b", choices=sorted(PROFILES), help="SoC profile (default ascend910b)")
    parser.add_argument("--strategy", default="ge", choices=("ge", "compact"), help="memory planning strategy")
    parser.add_argument("--no-reuse", action="store_true", help="disable memory reuse (ge.exec.disableReuseMemory=1)")
    parser.add_argument("--offline", action="store_true", help="ATC-style offline build (MemcpyAddrAsync for Data->NetOutput)")
    parser.add_argument("--feature-base-refreshable", action="store_true",
                        help="build for a refreshable feature base (ge.featureBaseRefreshable=1): HCCL ops count as "
                             "address-refreshable, so user memory meets them with no copy")


def run(args) -> int:
    graph = load_graph(args.model, args.shape, args.value)
    options = CompileOptions(soc=args.soc, strategy=args.strategy, reuse=not args.no_reuse, offline=args.offline,
                             feature_base_refreshable=args.feature_base_refreshable)
    model = compile_file(args.model, graph, options)
    data = encode(model)
    try:
        with open(args.output, "wb") as f:
            f.write(data)
    except OSError as e:
        raise UsageError(f"cannot write the model file: {e.strerror}", file=args.output) from e
    regions = ", ".join(f"{k} {v:,}" for k, v in model.regions.items())
    print(f"{args.output}: {len(data):,} bytes, {len(model.tasks.tasks)} tasks, "
          f"{len(model.tasks.zero_copy)} zero-copy slots; regions: {regions}", file=sys.stdout)
    return 0
