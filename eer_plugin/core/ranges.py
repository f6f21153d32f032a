"""The settings of the EER objective and of the binding ratio control, each declared once as data beside the maths:
its default and its range (a :class:`Bounds` with the paper's symbol).

The maths' own checks (:func:`eer_plugin.core.ratio_control.check_ratio_loss`,
:class:`eer_plugin.core.ratio_control.EntityPrice`, :func:`eer_plugin.core.calibration.calibrate_outside_shift`) and
the rules of the registered classes (:data:`eer_plugin.runtime.setting_values.RULES`, which ``eer-ner train`` checks
before it builds anything) are built from these declarations, so a setting has one range, said in one wording
(``entity_ratio must be a number in (0, 1) (rho: the expected share of entity subwords), got 1.5``) wherever it is
refused. :class:`Bounds` is also the range of every other number setting of the table. Plain Python, no torch: the
settings table and the light commands read it without loading torch.
"""

import dataclasses
import math
from typing import Any, Dict, Optional


def is_integer(value: Any) -> bool:
    """Whether ``value`` (a parsed JSON value, an argument) is an integer: an ``int`` and never a ``bool`` (``true``
    is an ``int`` in Python), never a float such as ``1.0``."""
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: Any) -> bool:
    """Whether ``value`` is a finite number: an ``int`` or ``float``, never a ``bool``, ``None`` or string, never
    ``NaN`` or ``Infinity`` (which Python's JSON parser reads as floats, as it reads ``1e999``), never a whole number
    too large for a float (``1`` and 400 zeros, as jsonnet writes ``1e400``: no computation can use it)."""
    try:
        return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    except OverflowError:
        return False


def _shown(value: float) -> str:
    """An end of a range as a message writes it: ``0``, ``0.5``, ``2**32 - 1``."""
    if is_integer(value) and value > 2**16 and (value + 1) & value == 0:
        return f"2**{value.bit_length()} - 1"
    return str(int(value)) if float(value).is_integer() else str(value)


@dataclasses.dataclass(frozen=True)
class Bounds:
    """The range of a number setting: ``low`` / ``high`` (None: no such end), each taken unless ``*_open``; a whole
    number when ``integer``. ``what`` names it (``a probability``; default ``a number`` / ``an integer``), ``symbol``
    is the paper's (``rho``) and ``note`` says what it is: :attr:`expected` says it all in one wording."""

    low: Optional[float] = None
    high: Optional[float] = None
    low_open: bool = False
    high_open: bool = False
    integer: bool = False
    what: str = ""
    symbol: str = ""
    note: str = ""

    def holds(self, value: Any) -> bool:
        """Whether ``value`` is a number of the range (never a bool, a string, NaN or an infinity)."""
        if not (is_integer(value) if self.integer else is_number(value)):
            return False
        above = self.low is None or (value > self.low if self.low_open else value >= self.low)
        return above and (self.high is None or (value < self.high if self.high_open else value <= self.high))

    @property
    def expected(self) -> str:
        """What a value must be: ``a number in (0, 1) (rho: the expected share of entity subwords)``, ``an integer of
        at least 1``, ``a number above 0 (c: ...)``."""
        what = self.what or ("an integer" if self.integer else "a number")
        if self.low is not None and self.high is not None:
            ends = f"{_shown(self.low)}, {_shown(self.high)}"
            what += f" in {'(' if self.low_open else '['}{ends}{')' if self.high_open else ']'}"
        elif self.low is not None:
            what += f" {'above' if self.low_open else 'of at least'} {_shown(self.low)}"
        elif self.high is not None:
            what += f" {'below' if self.high_open else 'of at most'} {_shown(self.high)}"
        said = ": ".join(part for part in (self.symbol, self.note) if part)
        return what + (f" ({said})" if said else "")

    def problem(self, name: str, value: Any) -> Optional[str]:
        """The one line for ``value`` of the setting ``name`` outside the range, or None when it holds."""
        return None if self.holds(value) else f"{name} must be {self.expected}, got {value!r}"

    def check(self, name: str, value: Any) -> Any:
        """``value``, or a ``ValueError`` with :meth:`problem`'s line."""
        problem = self.problem(name, value)
        if problem is not None:
            raise ValueError(problem)
        return value


# ------------------------------------------------------------------------ the EER objective: L_p + lambda_u * L_u
#: rho: the band's centre (the paper's 0.15); 0 or 1 would leave the CRF no entity or no O tag to expect
ENTITY_RATIO = Bounds(0, 1, low_open=True, high_open=True, symbol="rho", note="the expected share of entity subwords")
DEFAULT_ENTITY_RATIO = 0.15
#: gamma: the band's half width, no penalty while ``|rho - rho_hat| <= gamma`` (the paper's 0.05)
RATIO_MARGIN = Bounds(0, symbol="gamma", note="the band's half width around rho")
DEFAULT_RATIO_MARGIN = 0.05
#: lambda_u: the weight of the ratio hinge (the paper's 10); a negative weight would maximise it
RATIO_LOSS_WEIGHT = Bounds(0, symbol="lambda_u", note="the weight of the ratio loss; 0: none")
DEFAULT_RATIO_LOSS_WEIGHT = 10.0

# ------------------------------------------------------------------------ the binding ratio control
#: the ratio controls a tagger accepts: the paper's fixed weight alone (the default), or with the band held
RATIO_CONTROLS = ("fixed", "bind")
DEFAULT_RATIO_CONTROL = "fixed"
#: eta: the multipliers' step per unit of ratio outside the band, per training batch (nats per entity tag)
PRICE_RATE = Bounds(0, symbol="eta", note="the step of the binding control's multipliers")
DEFAULT_PRICE_RATE = 1.0
#: c: the price's immediate slope per unit of ratio outside the band (nats per entity tag); 0 divides psi by 0
PRICE_PENALTY = Bounds(0, low_open=True, symbol="c", note="the binding control's price slope outside the band")
DEFAULT_PRICE_PENALTY = 10.0
#: m: the running ratio's decay per batch (0.9: about the last 10 batches); 1 would never move it
MOMENTUM = Bounds(0, 1, high_open=True, symbol="m", note="the running ratio's decay per batch")
DEFAULT_MOMENTUM = 0.9

#: the argument name of each setting above -> its range (what the tests probe at its edges)
RANGES: Dict[str, Bounds] = {
    "entity_ratio": ENTITY_RATIO,
    "ratio_margin": RATIO_MARGIN,
    "ratio_loss_weight": RATIO_LOSS_WEIGHT,
    "price_rate": PRICE_RATE,
    "price_penalty": PRICE_PENALTY,
    "momentum": MOMENTUM,
}
