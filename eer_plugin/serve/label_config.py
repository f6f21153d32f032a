"""A Label Studio project's label config: which ``<Labels>`` the backend fills, over which ``<Text>``, and
which entity type of the model each label shows.

The config is Label Studio's XML (``<View>`` with controls and objects). The backend fills exactly one
``<Labels>`` control whose ``toName`` is a ``<Text>`` object; the text of a task is ``data[KEY]`` where the
``<Text>`` has ``value="$KEY"``. Each ``<Label value="X">`` shows the model's type ``X``, or, with
``predicted_values="A,B"`` (Label Studio's attribute for this), the types named there; a model that knows ``X``
itself (one the backend trained on the project knows its labels by their values) fills the label with ``X``. A
label no type of the model maps to is a :class:`LabelConfigError` (never a silently missing label); a type of the
model without a label is not predicted in this project (the project chooses its labels).
"""

import dataclasses
import xml.etree.ElementTree as ElementTree
from typing import Dict, List, Sequence

from eer_plugin.common.errors import UserError


class LabelConfigError(UserError):
    """A label config the backend cannot fill (no ``<Labels>``, no ``<Text>``, a label the model lacks)."""


@dataclasses.dataclass(frozen=True)
class LabelConfig:
    """The ``<Labels>`` control the backend fills, as a prediction's ``from_name`` / ``to_name`` name them."""

    #: the ``<Labels>`` control's ``name`` (a result's ``from_name``)
    from_name: str
    #: the ``<Text>`` object's ``name`` (a result's ``to_name``)
    to_name: str
    #: the task data key holding the text (``value="$text"`` -> ``text``)
    data_key: str
    #: the labels' values, in the config's order
    labels: List[str]
    #: label value -> the model types it shows (``predicted_values``, else the value itself)
    predicted_values: Dict[str, List[str]]

    def type_to_label(self, model_types: Sequence[str]) -> Dict[str, str]:
        """Model type -> the label that shows it (its own value where the model knows it, else the types of its
        ``predicted_values`` the model knows); :class:`LabelConfigError` when a label shows no type of the model, or
        two labels show one type."""
        known = set(model_types)
        mapping: Dict[str, str] = {}
        for label in self.labels:
            wanted = self.predicted_values[label]
            # the label's own value where the model knows it (a model trained on this project knows its labels by
            # their values), else the types of its predicted_values: both models fill the same config
            found = [label] if label in known else [t for t in wanted if t in known]
            if not found:
                how = f"predicted_values {','.join(wanted)}" if wanted != [label] else "its value"
                raise LabelConfigError(
                    f"label config: <Label value={label!r}> ({how}) is no entity type of the model, which knows "
                    f'{", ".join(model_types)}; rename the label to one of them, add predicted_values="TYPE" to it, '
                    "or train a model that knows it (eer-ner serve ... then Start Training)"
                )
            for entity_type in found:
                if entity_type in mapping:
                    raise LabelConfigError(
                        f"label config: the labels {mapping[entity_type]!r} and {label!r} both show the model's type "
                        f"{entity_type!r}; keep one"
                    )
                mapping[entity_type] = label
        return mapping


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def parse(config: str) -> LabelConfig:
    """The :class:`LabelConfig` of a label config's XML, or :class:`LabelConfigError` naming what is missing."""
    if not isinstance(config, str) or not config.strip():
        raise LabelConfigError(
            "no label config was sent (Label Studio sends the project's config at setup and predict)"
        )
    try:
        root = ElementTree.fromstring(config)
    except ElementTree.ParseError as error:
        raise LabelConfigError(f"label config is no XML: {error}") from None
    except UnicodeEncodeError as error:  # a lone surrogate (a \ud800 escape in the request's JSON): no character
        raise LabelConfigError(
            f"label config is no XML: character {error.start} is a lone surrogate "
            f"({config[error.start]!r}, half of a UTF-16 pair), which no XML text holds"
        ) from None
    texts = {}
    for element in root.iter():
        if _local(element.tag) in ("Text", "HyperText") and element.get("name"):
            texts[element.get("name")] = element.get("value", "")
    labels = [element for element in root.iter() if _local(element.tag) == "Labels"]
    if not labels:
        raise LabelConfigError(
            "label config has no <Labels> control: the backend predicts entity spans, so the project needs e.g. "
            '<Labels name="label" toName="text"><Label value="PER"/></Labels> over <Text name="text" value="$text"/>'
        )
    over_text = [element for element in labels if element.get("toName") in texts]
    if not over_text:
        raise LabelConfigError(
            f"label config: no <Labels> control points at a <Text> object (toName {[e.get('toName') for e in labels]}, "
            f"texts {sorted(texts)}); set toName to the <Text>'s name"
        )
    if len(over_text) > 1:
        raise LabelConfigError(
            f"label config has {len(over_text)} <Labels> controls over text ({', '.join(repr(e.get('name')) for e in over_text)}); "
            "the backend fills one: keep one per project"
        )
    control = over_text[0]
    value = texts[control.get("toName")]
    if not value.startswith("$") or len(value) < 2:
        raise LabelConfigError(
            f'label config: <Text name={control.get("toName")!r}> has value={value!r}; expected value="$KEY" (the task data key)'
        )
    values: List[str] = []
    predicted: Dict[str, List[str]] = {}
    for element in control.iter():
        if _local(element.tag) != "Label" or element.get("value") is None:
            continue
        label = element.get("value")
        values.append(label)
        aliases = [v.strip() for v in (element.get("predicted_values") or "").split(",") if v.strip()]
        predicted[label] = aliases or [label]
    if not values:
        raise LabelConfigError(f"label config: <Labels name={control.get('name')!r}> has no <Label value=...> inside")
    return LabelConfig(control.get("name", ""), control.get("toName"), value[1:], values, predicted)
