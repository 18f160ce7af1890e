#!/usr/bin/env python3
"""Exports the torchvision classification zoo (issue 23), as export_dev_models.py does each model.

Every classification model of the installed torchvision (torchvision.models.list_models), random
seeded weights, batch 1, 3x224x224, opset 17, eval mode with constant folding, written as
NAME.onnx with NAME.input_0.pb and PyTorch's NAME.output_0.pb. A model PyTorch cannot export is
listed in zoo.json with the reason; the run goes on. zoo.json (in the output folder) lists every
model with its family, tier, status and size, and is what bench/zoo_bench.js reads.

  /usr/bin/python3 bench/models/export_zoo.py [--out DIR] [--tier quick|full] [--only NAME]...
"""

import argparse
import json
import os
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export_dev_models as dev  # noqa: E402 (shares the export of one model)

torchvision = dev.torchvision
IMAGE = dev.IMAGE

# Name prefixes to families, longest prefix first.
FAMILIES = [
    ("efficientnet_v2", "EfficientNet-v2"), ("efficientnet", "EfficientNet"),
    ("mobilenet_v2", "MobileNet-v2"), ("mobilenet_v3", "MobileNet-v3"),
    ("regnet_x", "RegNet-X"), ("regnet_y", "RegNet-Y"), ("swin_v2", "Swin-v2"), ("swin", "Swin"),
    ("wide_resnet", "Wide ResNet"), ("resnext", "ResNeXt"), ("resnet", "ResNet"),
    ("alexnet", "AlexNet"), ("convnext", "ConvNeXt"), ("densenet", "DenseNet"),
    ("googlenet", "GoogLeNet"), ("inception", "Inception"), ("maxvit", "MaxViT"),
    ("mnasnet", "MNASNet"), ("shufflenet", "ShuffleNet-v2"), ("squeezenet", "SqueezeNet"),
    ("vgg", "VGG"), ("vit", "ViT"),
]

# One or two models per family, the small ones: the tier for iterating (make bench-zoo
# BENCH_ZOO=quick).
QUICK = [
    "alexnet", "convnext_tiny", "densenet121", "efficientnet_b0", "efficientnet_v2_s",
    "googlenet", "inception_v3", "maxvit_t", "mnasnet1_0", "mobilenet_v2", "mobilenet_v3_large",
    "regnet_x_400mf", "regnet_y_400mf", "resnet50", "resnext50_32x4d", "shufflenet_v2_x1_0",
    "squeezenet1_0", "swin_t", "swin_v2_t", "vgg11_bn", "vit_b_32", "wide_resnet50_2",
]


def family_of(name):
    for prefix, family in FAMILIES:
        if name.startswith(prefix):
            return family
    return "other"


def factory_of(name):
    kwargs = {"weights": None}
    if name == "inception_v3":  # the inference graph, as export_dev_models.py exports it
        kwargs.update(aux_logits=False, init_weights=False, transform_input=False)
    if name == "googlenet":
        kwargs.update(aux_logits=False, init_weights=False, transform_input=False)
    return lambda: torchvision.models.get_model(name, **kwargs)


def write_manifest(path, models):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump({"torch": dev.torch.__version__, "torchvision": torchvision.__version__,
                   "opset": dev.OPSET, "models": models}, f, indent=1, sort_keys=True)
    os.replace(tmp, path)


def zoo_names():
    return sorted(torchvision.models.list_models(module=torchvision.models))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=os.path.join(dev.REPO, "build", "zoo"),
                        help="output folder (default: build/zoo of the repository)")
    parser.add_argument("--tier", choices=["quick", "full"], default="quick")
    parser.add_argument("--only", action="append", metavar="NAME",
                        help="export only this model (repeatable)")
    parser.add_argument("--force", action="store_true", help="re-export models already present")
    args = parser.parse_args()

    dev.torch.set_num_threads(1)
    os.makedirs(args.out, exist_ok=True)
    manifest_path = os.path.join(args.out, "zoo.json")
    manifest = {}
    if os.path.exists(manifest_path):
        with open(manifest_path) as f:
            manifest = json.load(f).get("models", {})
        for name, entry in manifest.items():  # the tiers as this script defines them now
            entry["quick"] = name in QUICK
    names = zoo_names()
    unknown = [n for n in args.only or [] if n not in names]
    if unknown:
        sys.exit(f"export_zoo.py: not a torchvision classification model: {', '.join(unknown)}")
    wanted = args.only or (names if args.tier == "full" else [n for n in QUICK if n in names])
    start = time.monotonic()
    for i, name in enumerate(wanted):
        entry = {"family": family_of(name), "quick": name in QUICK}
        files = dev.files_of(args.out, name)
        if not args.force and all(os.path.exists(p) for p in files):
            entry.update(status="ok", mb=round(dev.model_bytes(args.out, name) / 1e6, 1))
            manifest[name] = entry
            continue
        print(f"[{i + 1}/{len(wanted)}] {name} ({time.monotonic() - start:.0f} s)",
              file=sys.stderr, flush=True)
        try:
            dev.export(args.out, name, factory_of(name), IMAGE)
            entry.update(status="ok", mb=round(dev.model_bytes(args.out, name) / 1e6, 1))
        except Exception as e:  # listed with the reason; the zoo goes on
            last = traceback.format_exception_only(type(e), e)[-1].strip()
            entry.update(status="export failed", reason=last[:300])
            print(f"{name}: export failed: {last}", file=sys.stderr, flush=True)
            for p in files + [files[0] + ".tmp", files[0] + ".data"]:
                if os.path.exists(p):
                    os.remove(p)
        manifest[name] = entry
        # Written after every model, through a temporary file, so an interrupted export keeps
        # what it finished.
        write_manifest(manifest_path, manifest)
    write_manifest(manifest_path, manifest)
    ok = sum(1 for n in wanted if manifest[n]["status"] == "ok")
    print(f"export_zoo: {ok} of {len(wanted)} models exported ({args.tier} tier) in "
          f"{time.monotonic() - start:.0f} s into {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
