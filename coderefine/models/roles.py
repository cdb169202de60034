"""A model per role: the author, critic and reviser may each use another model (default: ``model``).

``RoleModels`` is itself a ``Model``: it hands each request to the model of the request's role, so the loop
stays the same whatever the mix. Each reply names the model that answered, so tokens and cost are counted
per role and model.
"""

from __future__ import annotations

from collections.abc import Mapping

from coderefine.config import Settings
from coderefine.models.base import Model, ModelReply, ModelRequest, Role, ready, warm_up

ROLES: tuple[Role, ...] = ("author", "critic", "reviser")


def role_specs(settings: Settings) -> dict[Role, str]:
    """The model name of each role: its own setting, else ``model``."""
    own = {
        "author": settings.author_model,
        "critic": settings.critic_model,
        "reviser": settings.reviser_model,
    }
    return {role: own[role] or settings.model for role in ROLES}


def models_key(settings: Settings) -> str | dict[str, str]:
    """What names the models of a run in a cache key: the one name when every role uses it (as before)."""
    specs = role_specs(settings)
    return (
        settings.model if set(specs.values()) == {settings.model} else {str(r): m for r, m in specs.items()}
    )


class RoleModels:
    def __init__(self, models: Mapping[Role, Model]) -> None:
        self._models = dict(models)

    @property
    def name(self) -> str:
        return " ".join(f"{role}={self._models[role].name}" for role in ROLES if role in self._models)

    def model_for(self, role: Role) -> Model:
        return self._models[role]

    def warm_up(self) -> None:
        for model in {id(m): m for m in self._models.values()}.values():
            warm_up(model)

    def ready(self) -> None:
        for model in {id(m): m for m in self._models.values()}.values():
            ready(model)

    def complete(self, request: ModelRequest) -> ModelReply:
        return self._models[request.role].complete(request)
