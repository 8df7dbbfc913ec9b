"""The public Python API is typed and documented: every public function, class, method and
property of `oxide` (and `oxide.nvtx`) has a docstring and annotations on every parameter and its
return. `mypy --strict` itself runs in scripts/test-python; this walk needs no type checker."""
import inspect

import oxide

# Members that Python gives a class rather than the package: these need no docstring of oxide's.
_SKIP = {"__init__", "__new__", "__init_subclass__", "__subclasshook__", "__class_getitem__"}


def _public_objects():
    """(qualified name, object) of each public function and class the package exports."""
    for mod in (oxide, oxide.nvtx):
        for name in mod.__all__:
            obj = getattr(mod, name)
            if inspect.isfunction(obj) or inspect.isclass(obj):
                yield f"{mod.__name__}.{name}", obj


def _members(cls):
    """(name, function or property) defined by oxide's own classes in cls's MRO."""
    seen = set()
    for base in cls.__mro__:
        if not base.__module__.startswith("oxide"):
            continue
        for name, member in vars(base).items():
            if name in seen or name in _SKIP or (name.startswith("_") and not name.startswith("__")):
                continue
            seen.add(name)
            if isinstance(member, (staticmethod, classmethod)):
                member = member.__func__
            if inspect.isfunction(member) or isinstance(member, property):
                yield name, member


def _dunder(name):
    return name.startswith("__") and name.endswith("__")


def test_every_public_callable_has_a_docstring():
    missing = []
    for qual, obj in _public_objects():
        if not (obj.__doc__ or "").strip():
            missing.append(qual)
        if inspect.isclass(obj):
            for name, member in _members(obj):
                # Dunders implement a protocol (len, repr, iteration); their meaning is Python's.
                if not _dunder(name) and not (member.__doc__ or "").strip():
                    missing.append(f"{qual}.{name}")
    assert not missing, f"{len(missing)} public names have no docstring: {', '.join(sorted(missing))}"


def _unannotated(fn):
    sig = inspect.signature(fn)
    params = [p.name for i, p in enumerate(sig.parameters.values())
              if p.annotation is inspect.Parameter.empty and not (i == 0 and p.name in ("self", "cls"))]
    if sig.return_annotation is inspect.Signature.empty:
        params.append("return")
    return params


def test_every_public_callable_is_annotated():
    missing = []
    for qual, obj in _public_objects():
        if inspect.isfunction(obj) and _unannotated(obj):
            missing.append(f"{qual} ({', '.join(_unannotated(obj))})")
        if inspect.isclass(obj):
            for name, member in _members(obj):
                fns = [member.fget, member.fset] if isinstance(member, property) else [member]
                for fn in fns:
                    if fn is not None and _unannotated(fn):
                        missing.append(f"{qual}.{name} ({', '.join(_unannotated(fn))})")
    assert not missing, f"{len(missing)} public callables lack annotations: {'; '.join(sorted(missing))}"


def test_the_walk_sees_the_api():
    # The walk must reach the classes and their generated ops, or the checks above would pass on nothing.
    names = {qual for qual, _ in _public_objects()}
    assert {"oxide.Kernel", "oxide.DeviceArray", "oxide.Block", "oxide.nvtx.range", "oxide.version"} <= names
    block = dict(_members(oxide.Block))
    assert "add" in block and "cond_br" in block and "tid_x" in block
    assert len(block) > 200


def test_exceptions_are_documented_classes():
    for name in oxide.__all__:
        obj = getattr(oxide, name)
        if inspect.isclass(obj) and issubclass(obj, oxide.OxideError) and obj is not oxide.OxideError:
            assert obj.__module__ == "oxide._errors" and obj.__doc__, name
            assert obj.__name__ == name, (obj.__name__, name)
            assert obj.status is not None and oxide.status_name(obj.status).startswith("OXIDE_ERROR_"), name
