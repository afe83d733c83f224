"""``tpm-models export`` and ``tpm-models export-library``."""

from __future__ import annotations

import argparse

from tpm_models.cli.commands import add_command
from tpm_models.cli.options import (
    add_model_options,
    class_of,
    dataset_from_args,
    kernel_from_args,
    own_parameters,
    typed_params,
)
from tpm_models.data import min_max_scale
from tpm_models.export.library import MANIFEST, check_library, generate_library
from tpm_models.export.writers import FORMATS, NOT_FINITE_22, format_of, write
from tpm_models.files import writable_target
from tpm_models.kernels import KERNELS
from tpm_models.models.registry import build, model_info
from tpm_models.validation import check_output_path


def cmd_export(args: argparse.Namespace) -> int:
    """``tpm-models export``: build one model and write it."""
    check_output_path(args.out)
    writable_target(args.out)  # a device, a pipe or a folder is refused before any work
    if args.model == 22:
        raise ValueError(NOT_FINITE_22)
    data = dataset_from_args(args)
    c = class_of(data, args.class_)
    info = model_info(args.model)
    kernel = kernel_from_args(args)
    if info.kernel == "none" and kernel is not None and kernel.name != "linear":
        raise ValueError(f"({args.model}) is a linear model; --kernel applies to (10)-(13) and (19)")
    if info.kernel != "none" and kernel is None:
        raise ValueError(f"({args.model}) needs --kernel ({', '.join(KERNELS)})")
    if info.robust_p is None and (args.p is not None or args.eps is not None):
        raise ValueError(f"--p and --eps apply to the robust models 23-29, not ({args.model})")
    params = typed_params(args.param, own_parameters(info), f"({info.key})")
    model = build(args.model, min_max_scale(data.X), data.y, c, args.nu, args.alpha,
                  kernel=kernel if info.kernel != "none" else None, p=args.p, eps=args.eps, **params)
    path = write(model, args.out, args.format)
    print(f"wrote {path} ({format_of(path, args.format)}, {path.stat().st_size} bytes)")
    return 0


def cmd_export_library(args: argparse.Namespace) -> int:
    """``tpm-models export-library``: regenerate (or ``--check``) the instance library."""
    if args.check:
        problems = check_library(args.root)
        for line in problems:
            print(line)
        print(f"{args.root}: {'equal to' if not problems else f'{len(problems)} differences from'} a fresh export")
        return 1 if problems else 0
    check_output_path(args.root, folder=True)

    def progress(msg: str) -> None:
        if not args.quiet:
            print(f"  ... {msg}", flush=True)

    summary = generate_library(args.root, progress)
    size, removed = summary["bytes"], summary["removed"]
    if not isinstance(size, int | float) or not isinstance(removed, list):  # generate_library's dict of objects
        raise TypeError(f"generate_library returned bytes={size!r}, removed={removed!r}")
    print(f"{args.root}: {summary['instances']} instances, {summary['files']} files + {MANIFEST}, "
          f"{size / 1e6:.1f} MB, {summary['seconds']:.0f} s")
    print(f"removed {len(removed)} file(s) of the former library that it no longer has: "
          f"{', '.join(map(str, removed))}" if removed else "removed nothing (every other file is left as it was)")
    return 0


def add_parsers(sub: argparse._SubParsersAction) -> None:
    """Register ``export`` and ``export-library`` on the ``tpm-models`` subparsers."""
    e = add_command(sub, "export")
    add_model_options(e)
    e.add_argument("--format", choices=FORMATS, help="file format (default: from --out's extension)")
    e.add_argument("--out", required=True, help="file to write; a name ending in .gz is gzip-compressed")
    e.set_defaults(func=cmd_export)

    lib = add_command(sub, "export-library")
    lib.add_argument("--root", default="formulations", help="library folder (default: formulations)")
    lib.add_argument("--check", action="store_true",
                     help="do not write: compare the library with a fresh export (files, manifest structure)")
    lib.add_argument("--quiet", action="store_true", help="no progress lines")
    lib.set_defaults(func=cmd_export_library)
