"""The shipped scenarios by name, from any working directory.

    servesim.scenarios()                      # ['azure_conv_replay', ..., 'default_chat', ...]
    servesim.scenario_path("default_chat")    # '/.../scenarios/default_chat.json'
    servesim.run("default_chat")              # a name works wherever a path does
    sc = servesim.scenario("default_chat")    # its JSON as a dict, to change and run

They come from the data root's scenarios/ (the source tree the package was
built from while it exists, or $SERVESIM_ROOT), else from the copy the
wheel carries in servesim/data/scenarios.
"""
import difflib
import json
import os
from typing import Any, Dict, List, Optional, Set

from . import DATA_ROOT

_SUFFIX = ".json"


def _folders() -> List[str]:
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "scenarios")
    folders = []
    for folder in (os.path.join(DATA_ROOT, "scenarios"), here):
        if os.path.isdir(folder) and folder not in folders:
            folders.append(folder)
    return folders


def scenarios() -> List[str]:
    """The names of the shipped scenarios (sorted; ``scenario_path(name)``
    gives each file)."""
    names: Set[str] = set()
    for folder in _folders():
        names.update(f[:-len(_SUFFIX)] for f in os.listdir(folder) if f.endswith(_SUFFIX))
    return sorted(names)


def _name(text: str) -> str:
    # "default_chat", "default_chat.json" and "scenarios/default_chat.json"
    # all name the same shipped file.
    name = text.replace(os.sep, "/")
    if name.startswith("scenarios/"):
        name = name[len("scenarios/"):]
    return name[:-len(_SUFFIX)] if name.endswith(_SUFFIX) else name


def find_shipped(text: str) -> Optional[str]:
    """The shipped scenario `text` names, or None."""
    name = _name(text)
    if not name or "/" in name:
        return None
    for folder in _folders():
        path = os.path.join(folder, name + _SUFFIX)
        if os.path.isfile(path):
            return path
    return None


def scenario_path(name: str) -> str:
    """The file of the shipped scenario `name` ("default_chat", also
    "default_chat.json" or "scenarios/default_chat.json"), as an absolute
    path; FileNotFoundError, naming the closest names, when there is none."""
    path = find_shipped(name)
    if path is not None:
        return path
    known = scenarios()
    close = difflib.get_close_matches(_name(name), known, n=3)
    hint = f' (did you mean {", ".join(close)}?)' if close else ""
    raise FileNotFoundError(
        f"{name!r}: not a shipped scenario{hint}; servesim.scenarios() lists "
        f"the {len(known)} there are, in {', '.join(_folders()) or 'no scenarios folder'}")


def scenario(name: str) -> Dict[str, Any]:
    """The shipped scenario `name` as a dict (its JSON), to change and pass
    to run(), sweep(), ...; reports then name it "<dict>"."""
    with open(scenario_path(name)) as f:
        loaded: Dict[str, Any] = json.load(f)
    return loaded
