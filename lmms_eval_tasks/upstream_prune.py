"""Only what the exported tasks reach (issue 28, item 5: a size a maintainer accepts).

The export copies whole modules, but much of a module serves only the plugin (its commands, reports, the release
download, helpers its own glue calls). :func:`reachable_names` follows the names the exported code uses, from its
roots (the functions the task YAML names, the tests, the judge provider, ``make_hub_dataset.py``, and every
module-level statement that is not a definition) through ``from ... import`` and ``module.name`` references and the
names kept docstrings cite (``:func:`name```: a reader must find what the text names), across every module of every
export at once, so a shared module comes out the same whichever branch writes it. :func:`prune_module` then drops the
top-level definitions (functions, classes, assignments, an ``if __name__ == "__main__":`` block: it does not run on
import) nothing reaches, the comment lines right above each, and the imports only they used.

The analysis is static and keeps what it cannot follow: a module that calls ``globals()`` or names ``__all__`` is
kept whole, as is a package's ``__init__.py`` and any module used other than as ``module.name``. A name used only as
a string (``getattr(module, "name")``) is not followed: the exported tests and the CLI runs on upstream main
(tests/test_upstream_series.py, tests/test_upstream_cli.py) check that the pruned tasks still run and score.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

#: Marks a module kept whole in :func:`reachable_names`' answer.
WHOLE = "*"
#: Marks a module imported (its top-level statements run) in :func:`reachable_names`' answer.
IMPORTED = ""
#: The name a module's ``if __name__ == "__main__":`` block binds here: it does not run on import.
MAIN = "__main__"


@dataclass
class _Module:
    """One module's top-level statements, read once."""

    tree: ast.Module
    #: local name -> (module it is imported from, name there or None for the module itself); project modules only
    imports: dict[str, tuple[str, str | None]] = field(default_factory=dict)
    #: name -> the top-level definitions binding it
    definitions: dict[str, list[ast.stmt]] = field(default_factory=dict)
    #: top-level statements that are neither definitions nor imports: always kept (they run on import)
    always: list[ast.stmt] = field(default_factory=list)
    whole: bool = False


def _bound_names(node: ast.stmt) -> list[str] | None:
    """Names a top-level definition binds, or ``None`` when ``node`` is not a definition the pruning may drop."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, ast.Assign) and all(isinstance(t, ast.Name) for t in node.targets):
        return [t.id for t in node.targets]
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return [node.target.id]
    if isinstance(node, ast.If) and ast.unparse(node.test).replace("'", '"') == '__name__ == "__main__"':
        return [MAIN]  # runs only as a command: kept with a module kept whole (make_hub_dataset.py)
    return None


def _read(name: str, source: str, modules: set[str]) -> _Module:
    tree = ast.parse(source, name)
    module = _Module(tree, whole=name.endswith(".__init__") or _reads_globals(tree) or any(isinstance(n, ast.Name) and n.id == "__all__" for n in ast.walk(tree)))
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and not node.level and node.module:
            for alias in node.names:
                source_module = f"{node.module}.{alias.name}"
                if source_module in modules or f"{source_module}.__init__" in modules:
                    module.imports[alias.asname or alias.name] = (_canonical(source_module, modules), None)
                elif node.module in modules or f"{node.module}.__init__" in modules:
                    module.imports[alias.asname or alias.name] = (_canonical(node.module, modules), alias.name)
        elif isinstance(node, ast.Import):
            continue
        elif (bound := _bound_names(node)) is not None:
            for bound_name in bound:
                module.definitions.setdefault(bound_name, []).append(node)
        else:
            module.always.append(node)
    return module


def _reads_globals(tree: ast.Module) -> bool:
    """Whether ``tree`` calls ``globals()`` other than to bind a name (``globals()[name] = value``): a module that reads
    its names by string may use any of them, so it is kept whole. Binding a name this way is a top-level statement,
    kept with what it references."""
    stores = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Store)}
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "globals" and id(n) not in stores for n in ast.walk(tree))


def _canonical(name: str, modules: set[str]) -> str:
    return name if name in modules else f"{name}.__init__"


def _references(node: ast.AST) -> tuple[set[str], set[tuple[str, str]]]:
    """``(bare names, (name, attribute) pairs)`` that ``node`` reads: ``x`` alone, and ``x.y``."""
    bare, attributes = set(), set()
    based = set()
    for child in ast.walk(node):
        if isinstance(child, ast.Attribute) and isinstance(child.value, ast.Name):
            attributes.add((child.value.id, child.attr))
            based.add(id(child.value))
    for child in ast.walk(node):
        if isinstance(child, ast.Name) and id(child) not in based:
            bare.add(child.id)
    return bare, attributes


_CITATION = re.compile(r":(?:func|class|data|meth|attr|exc):`~?\.?([\w.]+)`")


def _citations(node: ast.AST) -> set[str]:
    """Names cited in ``node``'s docstrings and comments-as-strings (Sphinx roles such as ``:func:`name```)."""
    return {m for child in ast.walk(node) if isinstance(child, ast.Constant) and isinstance(child.value, str) for m in _CITATION.findall(child.value)}


def reachable_names(sources: dict[str, str], roots: dict[str, set[str]]) -> dict[str, set[str]]:
    """The top-level names each module must keep.

    Args:
        sources: ``{dotted module name: source}`` of every exported module (a package as ``<name>.__init__``).
        roots: ``{module: names}`` the exported code uses from outside the modules (the YAML's ``!function``
            references); :data:`WHOLE` among the names keeps the module whole (tests, the provider, commands).

    Returns:
        ``{module: names}`` for every module of ``sources``: its top-level definitions and project imports that are
        reached (an import of a module used only as ``module.name`` as ``"module."``); a module kept whole holds
        :data:`WHOLE`, one imported with no name of it used :data:`IMPORTED`, one never imported nothing.

    Raises:
        SyntaxError: a source that does not parse (names the module).
    """
    module_names = set(sources)
    modules = {name: _read(name, source, module_names) for name, source in sources.items()}
    kept: dict[str, set[str]] = {name: set() for name in sources}
    started: set[str] = set()
    pending: list[tuple[str, str]] = [(m, n) for m, wanted in roots.items() for n in wanted]
    pending += [(m, WHOLE) for m, module in modules.items() if module.whole]

    def read(module_name: str, nodes: list[ast.stmt]) -> None:
        module = modules[module_name]
        for node in nodes:
            for nested in ast.walk(node):  # an import inside a function: its names are reached with the function
                if nested is not node and isinstance(nested, ast.ImportFrom) and not nested.level and nested.module:
                    for alias in nested.names:
                        submodule = f"{nested.module}.{alias.name}"
                        if submodule in module_names or f"{submodule}.__init__" in module_names:
                            pending.append((_canonical(submodule, module_names), WHOLE))
                        elif nested.module in module_names or f"{nested.module}.__init__" in module_names:
                            pending.append((_canonical(nested.module, module_names), alias.name))
            bare, attributes = _references(node)
            pending.extend((module_name, n) for n in bare)
            for cited in _citations(node):  # a docstring's :func:`name`: the reader must find it
                owner, _, last = cited.rpartition(".")
                if not owner:
                    pending.append((module_name, last))
                elif owner in module_names or f"{owner}.__init__" in module_names:
                    pending.append((_canonical(owner, module_names), last))
            for base, attribute in attributes:
                if base in module.imports and module.imports[base][1] is None:  # module.name: the name, not the module
                    pending.extend([(module_name, base + "."), (module.imports[base][0], attribute)])
                else:
                    pending.append((module_name, base))

    while pending:
        module_name, name = pending.pop()
        if module_name not in modules or name in kept[module_name]:
            continue
        module = modules[module_name]
        kept[module_name].add(name)
        if module_name not in started:  # importing a module runs its top-level statements and imports
            started.add(module_name)
            read(module_name, module.always)
            used = {n.id for node in module.tree.body if not isinstance(node, (ast.Import, ast.ImportFrom)) for n in ast.walk(node) if isinstance(n, ast.Name)}
            pending.extend((module_name, local + ".") for local in module.imports if local not in used)  # kept by prune_module
        if name == WHOLE:
            read(module_name, [node for nodes in module.definitions.values() for node in nodes])
            pending.extend((module_name, local + ".") for local in module.imports)
            continue
        local = name.removesuffix(".")
        if local in module.imports:
            source_module, source_name = module.imports[local]
            if source_name is not None:
                pending.append((source_module, source_name))
            else:  # the module itself: used bare, all of it; as module.name, only the names read (see read)
                pending.append((source_module, IMPORTED if name.endswith(".") else WHOLE))
        read(module_name, module.definitions.get(local, []))
    # what a reference named that is not the module's own (builtins, locals, third-party imports) is not kept by name
    return {m: {n for n in found if n in (WHOLE, IMPORTED) or n.removesuffix(".") in modules[m].definitions or n.removesuffix(".") in modules[m].imports} for m, found in kept.items()}


def prune_module(source: str, keep: set[str], filename: str) -> str:
    """``source`` without the top-level definitions whose names are not in ``keep`` (as :func:`reachable_names`
    gives them), with the comment lines right above each, and without the import names only those definitions
    used. ``keep`` holding :data:`WHOLE` returns ``source`` unchanged.

    Raises:
        SyntaxError: ``source`` does not parse.
    """
    if WHOLE in keep:
        return source
    tree = ast.parse(source, filename)
    kept_names = {name.removesuffix(".") for name in keep}
    removed = [node for node in tree.body if (bound := _bound_names(node)) is not None and not set(bound) & kept_names]
    if not removed:
        return source
    rest = [node for node in tree.body if node not in removed and not isinstance(node, (ast.Import, ast.ImportFrom))]
    used_before = {n for node in tree.body if not isinstance(node, (ast.Import, ast.ImportFrom)) for n in _used(node)}
    used_after = {n for node in rest for n in _used(node)}
    lines = source.splitlines(keepends=True)
    replace: dict[int, str] = {}
    drop: set[int] = set()
    for node in removed:
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])]) - 1
        while first > 0 and lines[first - 1].lstrip().startswith("#"):
            first -= 1
        drop.update(range(first, node.end_lineno))
    for node in tree.body:
        if not isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        aliases = [a for a in node.names if (a.asname or a.name).split(".")[0] in used_after or (a.asname or a.name).split(".")[0] not in used_before]
        if len(aliases) == len(node.names):
            continue
        drop.update(range(node.lineno - 1, node.end_lineno))
        if aliases:
            node.names = aliases
            replace[node.lineno - 1] = lines[node.lineno - 1][: node.col_offset] + ast.unparse(node) + "\n"
    out = [replace.get(i, line) for i, line in enumerate(lines) if i not in drop or i in replace]
    return "".join(out).rstrip("\n") + "\n"


def _used(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
