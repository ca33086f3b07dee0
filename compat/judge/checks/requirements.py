"""Declared requirements of the installed distributions that are not satisfied (what `pip check` finds).

The matrix adds what installed metadata cannot say: which other releases of the dependent
package would accept the version that is installed ("keep torch 2.6.0, use vllm 0.8.x").

Three refinements over `pip check`: an exact torch pin that is broken is a compiled extension
that will not load (reported first, and pointed at the log line it ends in); every missing
dependency goes into one finding with one install command; and the ranges of an extra apply
when the extra was asked for by name (`trl[vllm]==0.15.2` in the requirements file or the lock
judged) or the run uses its feature (a script with `use_vllm=True`, a DeepSpeed launch), which pip
cannot see; an extra whose packages are merely installed (torch installs triton, a project pins its
own bitsandbytes) is shown at info only: installed metadata does not say the extra was wanted.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from packaging.markers import Marker
from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

from compat.judge.checks._util import cannot_check, found
from compat.judge.conditions import evaluate, in_spec, marker_holds
from compat.matrix import Matrix
from compat.matrix.signatures import Recognition
from compat.model.facts import Distribution, Facts, Launcher
from compat.model.findings import Finding, Severity, curated, observed
from compat.model.unknown import Unknown

WRONG_VERSION = "unsatisfied-requirement"
MISSING = "missing-requirement"
TORCH_PIN = "torch-pin-broken-extension"
EXTRA = "unsatisfied-extra-requirement"

MET_BY_EVERY_LOCK = frozenset({WRONG_VERSION, MISSING, TORCH_PIN})
"""Findings about the declared requirements of what is installed: a lock meets every declared requirement by
construction, so their fixes add nothing to a plan's targets (and a fix read off a package the plan moves, such
as transformers 4.46.0's huggingface-hub<1.0, would hold the new set to the old package's ranges)."""

OWNS = {
    WRONG_VERSION: frozenset({"dist", "project", "wanted", "dep"}),
    MISSING: frozenset({"names", "dists"}),
    TORCH_PIN: frozenset({"dist", "project", "pinned", "installed"}),
    EXTRA: frozenset({"dist", "project", "extras", "wanted", "dep", "name"}),
}
"""The catalog entries this check speaks through, and the `{fields}` it fills in each."""


def check_requirements(facts: Facts, matrix: Matrix) -> Iterator[Finding]:
    if isinstance(facts.packages, Unknown):
        yield cannot_check(matrix, WRONG_VERSION, facts.packages)
        return
    env = dict(facts.python.markers)
    installed = {d.name: d for d in facts.packages}
    undecided: dict[str, list[str]] = {}  # catalog id -> why each unmet requirement may not apply
    missing: list[tuple[Distribution, Requirement]] = []
    pins: dict[str, list[tuple[Distribution, Requirement]]] = {}  # torch version -> what pins it
    required: set[str] = set()  # what some installed distribution depends on (outside extras)
    for dist in facts.packages:
        for text in dist.requires:
            if _only_for_an_extra(text):
                continue
            req = _parse(text)
            if req is None:
                continue
            applies = True if req.marker is None else marker_holds(req.marker, env)
            if applies is False:
                continue
            required.add(str(canonicalize_name(req.name)))
            dep = installed.get(str(canonicalize_name(req.name)))
            if dep is not None and (not str(req.specifier) or in_spec(dep.version, req.specifier)):
                continue
            if isinstance(applies, Unknown):
                # Unmet, but whether it applies depends on a marker key the facts lack: never guessed from this host.
                fid = MISSING if dep is None else WRONG_VERSION
                undecided.setdefault(fid, []).append(f"{dist.name} {dist.version} requires {req}: {applies.reason}")
                continue
            if dep is None:
                missing.append((dist, req))
            elif dep.name == "torch" and _exact_pin(req) is not None:
                pins.setdefault(_exact_pin(req) or "", []).append((dist, req))
            else:
                yield _finding(dist, req, dep, matrix, env)
    for pinned, broken in sorted(pins.items()):
        # A pin on torch is broken only when another torch is installed.
        yield _torch_pin(pinned, broken, installed["torch"], matrix, env)
    if pins:
        # torch goes back to the pinned release first: what the installed torch declares leaves with it.
        missing = [(d, r) for d, r in missing if d.name != "torch"]
    if missing:
        yield _missing(missing, matrix)
    for fid, reasons in sorted(undecided.items()):
        yield cannot_check(matrix, fid, "; ".join(reasons))
    yield from _extras(facts.packages, facts, installed, frozenset(required), matrix, env)


_EXTRA = re.compile(r"""\bextra\s*==\s*['"]""")


def _only_for_an_extra(text: str) -> bool:
    """`...; extra == "x"` (joined by `and` only) never applies when no extra is asked for.

    Most Requires-Dist lines are of this kind and parsing them costs more than the rest of
    the check, so they are recognised without a full parse; anything less plain is parsed.
    """
    _, sep, marker = text.partition(";")
    return bool(sep) and _EXTRA.search(marker) is not None and " or " not in marker and "!=" not in marker


def _holds_for_any(marker: Marker, env: dict[str, str], extras: tuple[str, ...]) -> bool:
    return any(marker_holds(marker, env, extra=extra) is not False for extra in ("", *extras))


def _parse(text: str) -> Requirement | None:
    try:
        return Requirement(text)
    except InvalidRequirement:
        return None  # a malformed line in someone's metadata is pip's problem, not a finding


_RELEASES = "matrix/releases"
"""Where the curated release snapshot lives: the source of which releases accept an installed version."""


def _source(dist: Distribution) -> str:
    """The release's own metadata: the source of what it requires."""
    return f"pypi:{dist.name}=={dist.version.split('+')[0]}"


def _finding(dist: Distribution, req: Requirement, dep: Distribution, matrix: Matrix, env: dict[str, str]) -> Finding:
    wanted = f"{req.name}{req.specifier}"
    values = {"dist": f"{dist.name} {dist.version}", "project": dist.name, "wanted": wanted}
    evidence = [observed(f"{dist.name} {dist.version} declares {wanted}"), observed(f"{dep.name} {dep.version} is installed")]
    alternatives = compatible_releases(matrix, dist.name, dep.name, dep.version, env)
    if alternatives:
        evidence.append(curated(f"{dist.name} {alternatives} accept {dep.name} {dep.version}", source=_RELEASES))
    return found(matrix, WRONG_VERSION, values={**values, "dep": f"{dep.name} {dep.version}"},
                 requires=(wanted,), refs=(_source(dist),), evidence=tuple(evidence))


def _torch_pin(
    pinned: str, broken: list[tuple[Distribution, Requirement]], torch: Distribution, matrix: Matrix, env: dict[str, str],
) -> Finding:
    """One finding for every package compiled against torch `pinned`: one torch move broke them all.

    Only compiled code pins torch to one release (vLLM, xformers, torchvision): its C++ ABI is
    torch's, so the mismatch is an `undefined symbol` at import, not a subtle API change. The
    packages that pull the others in (vLLM pulls xformers and torchvision) are named first.
    """
    names = {d.name for d, _ in broken}
    pulled = {
        str(canonicalize_name(r.name)) for d, _ in broken for r in map(_parse, d.requires)
        if r is not None and (r.marker is None or marker_holds(r.marker, env) is True)
    } & names
    ordered = sorted(broken, key=lambda item: (item[0].name in pulled, item[0].name))
    evidence = [observed(f"{d.name} {d.version} declares {req.name}{req.specifier}") for d, req in ordered]
    evidence.append(observed(f"torch {torch.version} is installed"))
    for d, _ in ordered:
        if d.name not in pulled:
            alternatives = compatible_releases(matrix, d.name, "torch", torch.version, env)
            if alternatives:
                evidence.append(curated(f"{d.name} {alternatives} accept torch {torch.version}", source=_RELEASES))
    roots = [d for d, _ in ordered if d.name not in pulled] or [ordered[0][0]]
    return found(
        matrix, TORCH_PIN, requires=(f"torch=={pinned}",), evidence=tuple(evidence),
        values={"dist": ", ".join(f"{d.name} {d.version}" for d, _ in ordered), "project": " and ".join(d.name for d in roots),
                "pinned": pinned, "installed": torch.version},
        refs=tuple(_source(d) for d, _ in ordered),
        see=tuple(dict.fromkeys(e for d, _ in ordered for e in _undefined_symbol_entries(matrix, d.name))),
        commands=(f"pip install 'torch=={pinned}'",),
    )


def _exact_pin(req: Requirement) -> str | None:
    specs = list(req.specifier)
    if len(specs) == 1 and specs[0].operator in ("==", "===") and "*" not in specs[0].version:
        return specs[0].version
    return None


def _undefined_symbol_entries(matrix: Matrix, project: str) -> tuple[str, ...]:
    """Catalog entries for the `undefined symbol` a compiled `project` prints when its torch moved."""
    return tuple(sig.id for sig in matrix.signatures if sig.recognises_for(Recognition.ABI_UNDEFINED_SYMBOL, project))


def _missing(missing: list[tuple[Distribution, Requirement]], matrix: Matrix) -> Finding:
    """One finding for every absent dependency: one install command resolves them together."""
    wanted: dict[str, Requirement] = {}
    for _, req in missing:
        key = str(canonicalize_name(req.name))
        if key in wanted:
            merged = wanted[key]
            merged.specifier &= req.specifier
            merged.extras |= req.extras
        else:
            wanted[key] = Requirement(str(req).split(";")[0].strip())
    for req in wanted.values():
        req.specifier = _tighter(req.specifier)
    specs = tuple(str(wanted[k]) for k in sorted(wanted))
    dists = sorted({f"{d.name} {d.version}" for d, _ in missing})
    evidence = tuple(observed(f"{d.name} {d.version} declares {req.name}{req.specifier}") for d, req in missing)
    return found(
        matrix, MISSING, values={"names": ", ".join(sorted(wanted)), "dists": ", ".join(dists)},
        requires=specs, evidence=evidence + (observed(f"not installed: {', '.join(sorted(wanted))}"),),
        commands=("pip install " + " ".join(f"'{s}'" for s in specs),),
        refs=tuple(dict.fromkeys(_source(d) for d, _ in missing)),
    )


def _tighter(spec: SpecifierSet) -> SpecifierSet:
    """Two lower bounds say what the higher one says ("transformers>=4.48.2", not ">=4.46.0,>=4.48.2")."""
    lower = [s for s in spec if s.operator == ">="]
    if len(lower) < 2:
        return spec
    try:
        top = max(lower, key=lambda s: Version(s.version))
    except ValueError:  # InvalidVersion, or a number longer than int() reads
        return spec
    return SpecifierSet(",".join(str(s) for s in spec if s.operator != ">=" or s is top))


# Extras for a project's own development: they name test and lint tools, not a way to use it.
_DEV_EXTRA = re.compile(r"(^|[-_])(dev|develop|test|tests|testing|docs?|quality|style|lint|bench|benchmarks?|all|full|ci)($|[-_])")
_EXTRA_NAME = re.compile(r"""\bextra\s*==\s*['"]([^'"]+)['"]""")
_LEADING_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def _name(text: str) -> str:
    """The canonical project name a Requires-Dist line starts with ("" when it starts with none)."""
    m = _LEADING_NAME.match(text)
    return str(canonicalize_name(m.group(1))) if m else ""


def _catalog_speaks(matrix: Matrix, facts: Facts, project: str, dep: str) -> bool:
    """A catalog entry about this very pair holds here: it says more than the range does (one finding per problem)."""
    return any(
        sig.doctor and {project, dep} <= set(dict(sig.when.packages)) and evaluate(sig.when, facts).matched
        for sig in matrix.signatures
    )


def _in_effect(named: set[str], installed: dict[str, Distribution], required: frozenset[str]) -> bool:
    """It names tracked packages, all of them are installed, and one of them is there for its own sake."""
    return bool(named) and all(n in installed for n in named) and not named <= required


def _asked(facts: Facts) -> dict[str, frozenset[str]]:
    """The extras asked for by name, per project (`trl[vllm]` in the requirements or the lock judged)."""
    out: dict[str, frozenset[str]] = {}
    for text in facts.requested:
        req = _parse(text)
        if req is not None:
            key = str(canonicalize_name(req.name))
            out[key] = out.get(key, frozenset()) | frozenset(str(canonicalize_name(e)) for e in req.extras)  # PEP 685
    return out


def _used(facts: Facts) -> dict[str, str]:
    """Extras whose feature the run uses, whichever project declares them, with the fact that says so."""
    used: dict[str, str] = {}
    if facts.script is not None and facts.script.use_vllm is True:
        used["vllm"] = f"{facts.script.path} sets use_vllm=True"
    accelerate = facts.launch.accelerate
    if facts.launch.launcher is Launcher.DEEPSPEED:
        used["deepspeed"] = "training is launched with deepspeed"
    elif accelerate is not None and not isinstance(accelerate, Unknown) and accelerate.distributed_type == "DEEPSPEED":
        used["deepspeed"] = f"{accelerate.path} sets distributed_type: DEEPSPEED"
    return used


def _extras(
    packages: tuple[Distribution, ...], facts: Facts, installed: dict[str, Distribution], required: frozenset[str],
    matrix: Matrix, env: dict[str, str],
) -> Iterator[Finding]:
    """Ranges of the extras that were asked for or whose feature the run uses, at the catalog's severity; ranges
    of an extra that is only installed, at info.

    pip checks an extra only when it was asked for (`pip install trl[vllm]`), and installed metadata
    does not record that it was: a requirements line or a lock target that names it does, and so does
    a script or launch that uses the feature. An extra whose packages are merely there says little:
    torch installs triton (deepspeed's `[triton]`), a project pins its own bitsandbytes (trl's
    `[quantization]`), and sets that upstream CI ran that way are not broken. Such an extra is shown
    at info when every tracked package it names is installed and one of them is there for its own
    sake (nothing else installed requires it). Ranges on installed packages are judged; absent ones are not.
    """
    from compat.matrix.releases import TRACKED

    tracked = frozenset(TRACKED)
    asked, used = _asked(facts), _used(facts)
    for dist in packages:
        by_extra: dict[str, list[str]] = {}
        for text in dist.requires:
            m = _EXTRA_NAME.search(text.partition(";")[2])
            if m is not None and not _DEV_EXTRA.search(m.group(1).lower()):
                by_extra.setdefault(m.group(1), []).append(text)
        # package -> (installed, unmet requirements, extras, why each extra applies; "" when only installed)
        unmet: dict[str, tuple[Distribution, list[Requirement], list[str], list[str]]] = {}
        for extra, lines in sorted(by_extra.items()):
            why = (f"{dist.name}[{extra}] is asked for by name" if canonicalize_name(extra) in asked.get(dist.name, frozenset())
                   else used.get(extra, ""))
            # Most extras name a tracked package that is absent: decided on the names, before any parse.
            names = {_name(text) for text in lines} & tracked
            if not (names & set(installed) if why else _in_effect(names, installed, required)):
                continue
            reqs = [r for r in map(_parse, lines) if r is not None]
            applying = [r for r in reqs if r.marker is None or marker_holds(r.marker, env, extra=extra) is True]
            names = {str(canonicalize_name(r.name)) for r in applying} & tracked
            if not (names & set(installed) if why else _in_effect(names, installed, required)):
                continue
            for req in applying:
                dep = installed.get(str(canonicalize_name(req.name)))
                if dep is None or not str(req.specifier) or in_spec(dep.version, req.specifier):
                    continue
                _, specs, extras, whys = unmet.setdefault(dep.name, (dep, [], [], []))
                if req not in specs:
                    specs.append(req)
                extras.append(extra)
                if why and why not in whys:
                    whys.append(why)
        for name in sorted(unmet):
            dep, specs, extras, whys = unmet[name]
            if _catalog_speaks(matrix, facts, dist.name, dep.name):
                continue
            spec = specs[0].specifier
            for other in specs[1:]:
                spec &= other.specifier
            wanted = f"{specs[0].name}{spec}"
            shown = ", ".join(dict.fromkeys(extras))
            evidence = [observed(f"{dist.name} {dist.version} [{shown}] declares {wanted}"),
                        observed(f"{dep.name} {dep.version} is installed")]
            evidence += [observed(why) for why in whys] or [observed(
                f"nothing asks for {dist.name}[{shown}] by name (no requirements line, lock target, script"
                " or launch that uses it): its range is shown, not held against the set")]
            alternatives = compatible_releases(matrix, dist.name, dep.name, dep.version, env, extras=tuple(extras))
            if alternatives:
                evidence.append(curated(f"{dist.name} {alternatives} accept {dep.name} {dep.version}", source=_RELEASES))
            yield found(
                matrix, EXTRA, requires=(wanted,), refs=(_source(dist),), evidence=tuple(evidence),
                severity=None if whys else Severity.INFO,
                values={"dist": f"{dist.name} {dist.version}", "project": dist.name, "extras": shown,
                        "wanted": wanted, "dep": f"{dep.name} {dep.version}", "name": dep.name},
            )


def compatible_releases(
    matrix: Matrix, dependent: str, dep: str, dep_version: str, env: dict[str, str], *, extras: tuple[str, ...] = (),
) -> str:
    """The newest run of consecutive releases of `dependent` that accept `dep_version`: "a … b" or "".

    With `extras`, the requirements those extras add count as well (trl's `[vllm]` range on vLLM).
    """
    package = matrix.releases.get(dependent)
    if package is None:
        return ""
    dep_key = canonicalize_name(dep)
    runs: list[list[str]] = [[]]
    for release in package.releases:
        if release.yanked or release.requires is None:
            continue
        if release.requires_python is not None and not in_spec(env.get("python_full_version", "3.11"), release.requires_python):
            continue
        reqs = [
            r for r in release.requires
            if canonicalize_name(r.name) == dep_key
            and (r.marker is None or _holds_for_any(r.marker, env, extras))  # unknown: assume it applies
        ]
        if reqs and all(in_spec(dep_version, r.specifier) for r in reqs):
            runs[-1].append(str(release.version))
        elif runs[-1]:
            runs.append([])
    fits = next((run for run in reversed(runs) if run), [])
    if not fits:
        return ""
    return fits[0] if len(fits) == 1 else f"{fits[0]} … {fits[-1]} ({len(fits)} releases)"
