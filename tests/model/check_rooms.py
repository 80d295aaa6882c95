#!/usr/bin/env python3
"""The model's rooms, checked from its #include lines: a file may include its own room and the
rooms below it, never one above. The order (docs/architecture.md, "model/ in rooms"):
base < pattern < profile < timing < simulation, and families, which sit on pattern and profile.
Exit 1 naming every include that climbs back; 0 with a count otherwise."""
import pathlib
import re
import sys

# What each room may include besides itself.
ALLOWED = {
    "base": set(),
    "pattern": {"base"},
    "profile": {"base", "pattern"},
    "timing": {"base", "pattern", "profile"},
    "simulation": {"base", "pattern", "profile", "timing"},
    "families": {"base", "pattern", "profile"},
}
ROOMS = [room for room in ALLOWED if room != "base"]


def room_of(path: str) -> str:
    """A model path (src/..., include/cachewise/model/...) or an include name to its room."""
    path = path.removeprefix("model/").removeprefix("src/").removeprefix("include/").removeprefix("cachewise/model/")
    first = path.split("/", 1)[0]
    return first if first in ROOMS and "/" in path else "base"


def main() -> int:
    model = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "model")
    climbs, checked = [], 0
    for file in sorted(model.rglob("*")):
        if file.suffix not in {".hpp", ".cpp", ".in"} or file.name == "model.hpp":
            continue  # the umbrella includes every room by design
        source_room = room_of(str(file.relative_to(model)))
        for number, line in enumerate(file.read_text().splitlines(), 1):
            match = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
            if not match or not (match[1].startswith("cachewise/model/") or match[1].split("/")[0] in ROOMS or match[1] == "json_node.hpp"):
                continue
            checked += 1
            target_room = room_of(match[1])
            if target_room != source_room and target_room not in ALLOWED[source_room]:
                climbs.append(f"{file}:{number}: {source_room} includes {match[1]} ({target_room})")
    if climbs:
        print("check_rooms: includes that climb back:\n  " + "\n  ".join(climbs), file=sys.stderr)
        return 1
    print(f"check_rooms: {checked} includes inside model/, none climbs back")
    return 0


if __name__ == "__main__":
    sys.exit(main())
