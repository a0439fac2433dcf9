"""The connection form for Airflow before 3.2, built from the provider info's declaration.

Airflow 3.2 and later read the form as data from ``get_provider_info`` (``conn-fields`` and
``ui-field-behaviour``) and skip the hook's methods. Airflow 3.0 and 3.1 only call the hook's
``get_connection_form_widgets`` and ``get_ui_field_behaviour``: these build the same form from the
same declaration, so the two cannot drift apart. The 3.1 UI turns WTForms fields into its form
(``HookMetaService``) and needs ``wtforms`` importable, as for every provider's form there (the
FAB auth manager installs it); without it Airflow shows the standard fields, for every type.
"""

from __future__ import annotations

from typing import Any

from airflow_blindata.get_provider_info import get_provider_info

__all__ = ["connection_form_widgets", "ui_field_behaviour"]


def _declared() -> dict[str, Any]:
    (connection_type,) = get_provider_info()["connection-types"]
    return dict(connection_type)


def ui_field_behaviour() -> dict[str, Any]:
    """``ui-field-behaviour`` with the hook method's keys (``hidden_fields``, ...)."""
    declared = _declared()["ui-field-behaviour"]
    return {key.replace("-", "_"): value for key, value in declared.items()}


def connection_form_widgets() -> dict[str, Any]:
    """The extra fields as WTForms fields, from ``conn-fields`` (raises ImportError without
    wtforms, which Airflow reports as "UI widgets will be missing").

    Airflow 3.1 takes four field classes: a string (an ``enum`` validated with ``any_of``), a
    boolean, an integer (the seconds: a form's number is whole seconds; the connection reads any
    number), and JSON objects as their text (``api_paths``, which the hook reads either way).
    """
    from wtforms import BooleanField, IntegerField, StringField
    from wtforms.validators import Optional, any_of

    widgets: dict[str, Any] = {}
    for name, field in _declared()["conn-fields"].items():
        schema = field["schema"]
        kinds = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        options: dict[str, Any] = {
            "label": field["label"],
            "description": field.get("description", ""),
        }
        if "default" in schema:
            options["default"] = schema["default"]
        if "boolean" in kinds:
            widgets[name] = BooleanField(**options)
        elif "number" in kinds or "integer" in kinds:
            widgets[name] = IntegerField(validators=[Optional()], **options)
        elif "enum" in schema:
            widgets[name] = StringField(validators=[any_of(schema["enum"])], **options)
        else:
            widgets[name] = StringField(validators=[Optional()], **options)
    return widgets
