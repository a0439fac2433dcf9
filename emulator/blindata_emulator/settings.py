"""Settings of the emulator: its tenants, its users and their rights, and its limits.

The settings are a plain value object so that a test can build one in a line
(`EmulatorSettings.single(tenant, user, key)`) and the CLI can build one from its flags. They are
checked when built, so a typo (a user bound to a tenant that the emulator does not serve, an
unknown permission) fails at once with the name of the bad value, not as a puzzling 403 later.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = [
    "ALL_PERMISSIONS",
    "DEFAULT_TENANT",
    "EmulatorSettings",
    "EmulatorUser",
    "editor_permission",
    "viewer_permission",
]

DEFAULT_TENANT = "00000000-0000-4000-8000-000000000001"
"""The tenant served when the settings name none."""

DEFAULT_PAGE_SIZE_CAP = 1000
DEFAULT_TOKEN_TTL_SECONDS = 3600.0

PERMISSION_AREAS: tuple[str, ...] = (
    "SYSTEMS",
    "PHYSICAL_MODEL",
    "DATA_FLOWS",
    "QUERY_PARSER",
    "QUALITY",
    "PROFILING",
)
"""Each area has a VIEWER (read) and an EDITOR (read and write) permission, as in Blindata."""


def viewer_permission(area: str) -> str:
    """The permission that lets a user read the resources of `area`."""
    return f"{area}_VIEWER"


def editor_permission(area: str) -> str:
    """The permission that lets a user read and write the resources of `area`."""
    return f"{area}_EDITOR"


ALL_PERMISSIONS: tuple[str, ...] = tuple(
    perm for area in PERMISSION_AREAS for perm in (viewer_permission(area), editor_permission(area))
)


@dataclass
class EmulatorUser:
    """An application user: `password` is both its login password and its API key.

    `tenants=None` gives access to every tenant of the emulator; the first tenant of the list
    (or of the emulator) is the user's default tenant, used when a request has no X-BD-Tenant.
    """

    username: str
    password: str = field(repr=False)
    tenants: list[str] | None = None
    permissions: list[str] = field(default_factory=lambda: list(ALL_PERMISSIONS))
    full_name: str | None = None

    def __post_init__(self) -> None:
        if not self.username:
            raise ValueError("EmulatorUser.username must not be empty")
        if not self.password:
            raise ValueError(f"EmulatorUser {self.username!r}: password must not be empty")
        unknown = sorted(set(self.permissions) - set(ALL_PERMISSIONS))
        if unknown:
            raise ValueError(
                f"EmulatorUser {self.username!r}: unknown permissions {unknown}; "
                f"known: {list(ALL_PERMISSIONS)}"
            )

    def can_read(self, area: str) -> bool:
        """Whether the user may read `area` (an editor may read too)."""
        return viewer_permission(area) in self.permissions or self.can_write(area)

    def can_write(self, area: str) -> bool:
        """Whether the user may create, change or delete in `area`."""
        return editor_permission(area) in self.permissions


@dataclass
class EmulatorSettings:
    """Everything the emulator needs to start.

    - `db_path`: the SQLite file that holds the state (`:memory:` for a throw-away emulator).
    - `tenants`: the tenants served; the first is the default tenant of users bound to none.
    - `page_size_cap`: the largest page `size` served (bigger requests are capped, as Spring does).
    - `token_ttl_seconds`: lifetime of a bearer token from `/auth/login`.
    - `analysis_delay_seconds`: the least time a statement stays PENDING after `analyze`; it
      also always stays PENDING until a later request, whatever the delay.
    - `moved_paths`: contract path → the path this emulator serves it at instead (every method
      of the path moves; the contract path answers 404), to play an instance that serves a path
      elsewhere. Keys are checked against the routes when the app is created.
    - `unordered_pages`: a list asked without `sort` is served in an order that changes from
      request to request, as a database read without `ORDER BY` may serve it (PostgreSQL's
      synchronised sequential scans start where another scan is); a client that walks the pages
      without a `sort` then skips and repeats objects. `False`: creation order, always.
    - `max_body_bytes`: the largest request body accepted; a larger one is answered 413 with
      the error body, unprocessed, as the proxy in front of a Blindata instance (nginx's
      `client_max_body_size`, 1 MB by default) or Spring's own limit does. `None`: no limit.
    """

    db_path: str = ":memory:"
    tenants: list[str] = field(default_factory=lambda: [DEFAULT_TENANT])
    users: list[EmulatorUser] = field(default_factory=list)
    page_size_cap: int = DEFAULT_PAGE_SIZE_CAP
    token_ttl_seconds: float = DEFAULT_TOKEN_TTL_SECONDS
    analysis_delay_seconds: float = 0.0
    moved_paths: dict[str, str] = field(default_factory=dict)
    max_body_bytes: int | None = None
    unordered_pages: bool = False

    def __post_init__(self) -> None:
        if not self.tenants:
            raise ValueError("EmulatorSettings.tenants must name at least one tenant")
        if self.page_size_cap < 1:
            raise ValueError("EmulatorSettings.page_size_cap must be at least 1")
        if self.token_ttl_seconds <= 0:
            raise ValueError("EmulatorSettings.token_ttl_seconds must be positive")
        if self.analysis_delay_seconds < 0:
            raise ValueError("EmulatorSettings.analysis_delay_seconds must not be negative")
        if self.max_body_bytes is not None and self.max_body_bytes < 1:
            raise ValueError("EmulatorSettings.max_body_bytes must be at least 1 (or None)")
        for source, target in self.moved_paths.items():
            if not target.startswith("/") or target == source:
                raise ValueError(
                    f"EmulatorSettings.moved_paths[{source!r}] must be another path starting "
                    f"with '/', got {target!r}"
                )
        seen: set[str] = set()
        for user in self.users:
            if user.username in seen:
                raise ValueError(f"EmulatorSettings.users: user {user.username!r} is listed twice")
            seen.add(user.username)
            foreign = sorted(set(user.tenants or []) - set(self.tenants))
            if foreign:
                raise ValueError(
                    f"EmulatorUser {user.username!r} names tenants {foreign} "
                    "that are not in EmulatorSettings.tenants"
                )
            if user.tenants == []:
                raise ValueError(
                    f"EmulatorUser {user.username!r}: tenants=[] gives access to nothing; "
                    "use None for every tenant"
                )

    @classmethod
    def single(
        cls, tenant: str, username: str, api_key: str, db_path: str = ":memory:"
    ) -> EmulatorSettings:
        """One tenant and one user with every permission: the usual test and demo set-up."""
        return cls(
            db_path=db_path,
            tenants=[tenant],
            users=[EmulatorUser(username=username, password=api_key)],
        )

    def user(self, username: str) -> EmulatorUser | None:
        """The user called `username`, if any."""
        return next((user for user in self.users if user.username == username), None)

    def tenants_of(self, user: EmulatorUser) -> list[str]:
        """The tenants `user` may reach, default first."""
        return list(user.tenants) if user.tenants is not None else list(self.tenants)
