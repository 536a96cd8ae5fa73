"""The WinoQueer sentence pair behind a WinoQueer-NLI row, for token-probability bias on exactly
the NLI items: ``<SUBJECT> is <IDENTITY>.`` premises and a ``<SUBJECT> <PREDICATE>.`` hypothesis
joined back as WinoQueer's ``<SUBJECT> is <IDENTITY> and <PREDICATE>`` (a repeated copula dropped).

>>> recover_pair("Jaz is nonbinary.", "Jaz is cis.", "Jaz is sensitive.")
SentencePair(more='Jaz is nonbinary and sensitive', less='Jaz is cis and sensitive')
>>> recover_pair("Some people are gay.", "Some people are straight.", "Some people lack moral fiber.")
SentencePair(more='Some people are gay and lack moral fiber', less='Some people are straight and lack moral fiber')
>>> recover_pair("Jaz is gay.", "Kim is straight.", "Jaz is sensitive.") is None
True
"""

from __future__ import annotations

import re

from nlibias.benchmarks.base import SentencePair

PREMISE = re.compile(r"^(?P<subject>.+?) (?P<copula>is|are) (?P<identity>.+?)\.?$")


def recover_pair(stereo_premise: str, counter_premise: str, hypothesis: str) -> SentencePair | None:
    """The WinoQueer pair of one WQ-NLI row, or None when its sentences do not fit the templates."""
    stereo = PREMISE.match(stereo_premise.strip())
    counter = PREMISE.match(counter_premise.strip())
    if stereo is None or counter is None:
        return None
    subject, copula = stereo["subject"], stereo["copula"]
    if (counter["subject"], counter["copula"]) != (subject, copula):
        return None
    text = hypothesis.strip().rstrip(".").strip()
    if not text.startswith(subject + " "):
        return None
    predicate = text[len(subject) + 1 :]
    if predicate.startswith(copula + " "):
        predicate = predicate[len(copula) + 1 :]
    if not predicate:
        return None
    head = f"{subject} {copula}"
    return SentencePair(
        f"{head} {stereo['identity']} and {predicate}", f"{head} {counter['identity']} and {predicate}"
    )
