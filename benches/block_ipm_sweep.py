#!/usr/bin/env python3
"""Seeded random models for the block interior point: does it certify on its own?

Writes 14 model files a seed (clipped Poisson sums of 30–150 records, caps 2–10; binomial chains
of 100–600 trials; 3-way multinomial lattices of 15–35 records at resolutions 6–10; ε from 0.2 to
2, three priors, squared or absolute loss), then solves each with `ubapp solve FILE --solver
block-ipm --json --quiet` and prints one line a model: its status, seconds, certified gap,
iterations and how the interior point ended. A model that is not `optimal`, or whose interior
point ended "at its numerical limit" above the certificate's tolerance, is one where the solver
needed a fallback.

    python3 benches/block_ipm_sweep.py --seed 41 --out /tmp/sweep [--ubapp target/release/ubapp]
"""

import argparse
import json
import pathlib
import random
import re
import subprocess


def models(seed):
    rng = random.Random(seed)
    for i in range(14):
        eps = rng.choice([0.2, 0.3, 0.5, 1.0, 2.0])
        points = rng.choice([20, 30, 40, 60])
        prior = rng.choice(['{ kind = "uniform" }', '{ kind = "beta", a = 2.0, b = 5.0 }',
                            '{ kind = "beta", a = 0.5, b = 0.5 }'])
        loss = rng.choice(["squared", "absolute"])
        kind = rng.choice(["poisson", "poisson", "binomial", "multinomial"])
        output = ""
        if kind == "poisson":
            records, cap = rng.choice([30, 60, 100, 150]), rng.choice([2, 3, 5, 7, 10])
            if records * cap > 900:
                cap = max(2, 900 // records)
            observation = f'family = "poisson"\nrecords = {records}\ncap = {cap}'
            upper = rng.choice([2.0, 4.0, 8.0])
            parameter = f'lower = 0.0\nupper = {upper}\ngrid = {{ kind = "midpoint", points = {points} }}\nprior = {prior}'
            label = f"p{records}c{cap}"
        elif kind == "binomial":
            trials = rng.choice([100, 300, 600])
            observation = f'family = "binomial"\ntrials = {trials}'
            parameter = f'lower = 0.0\nupper = 1.0\ngrid = {{ kind = "midpoint", points = {points} }}\nprior = {prior}'
            label = f"b{trials}"
        else:
            records, resolution = rng.choice([15, 25, 35]), rng.choice([6, 8, 10])
            alpha = rng.choice(["[1.0, 2.0, 3.0]", "[2.0, 3.0, 5.0]", "[0.5, 0.5, 0.5]"])
            observation = f'family = "multinomial"\ncategories = 3\nrecords = {records}'
            parameter = f'grid = {{ kind = "simplex", resolution = {resolution} }}\nprior = {{ kind = "dirichlet", alpha = {alpha} }}'
            loss = "squared-euclidean"
            output = '[output]\ngrid = "parameter"\n'
            label = f"m{records}r{resolution}"
        name = f"s{seed}-{i:02d}-{label}-e{eps}-{loss}"
        text = (f'name = "{name}"\nepsilon = [{eps}]\n[parameter]\n{parameter}\n[observation]\n'
                f'{observation}\n{output}[loss]\nkind = "{loss}"\n')
        yield name, text


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=41)
    parser.add_argument("--out", type=pathlib.Path, required=True, help="folder for the model files")
    parser.add_argument("--ubapp", default="target/release/ubapp")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for name, text in models(args.seed):
        path = args.out / f"{name}.toml"
        path.write_text(text)
        run = subprocess.run([args.ubapp, "solve", str(path), "--solver", "block-ipm", "--json", "--quiet"],
                             capture_output=True, text=True)
        if run.returncode != 0:
            print(f"{name} failed (exit {run.returncode}): {run.stderr.strip()}")
            continue
        answer = json.loads(run.stdout)[0]
        detail = answer["solver_detail"]
        iterations = re.findall(r"after (\d+) iterations", detail)
        ending = re.findall(r"block interior point: ([a-z ]+?)(?: \(| after)", detail)
        print(f"{name} {answer['status']} {answer['seconds']:.2f} s gap {answer['relative_gap']:.2e} "
              f"iterations {' '.join(iterations)} ({ending[0] if ending else '?'})")


if __name__ == "__main__":
    main()
