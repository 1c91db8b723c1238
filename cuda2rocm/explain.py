"""A rule's documentation as Markdown, built from its catalogue entry (for `explain` and docs)."""

from __future__ import annotations

from cuda2rocm.catalogue import RuleSpec

FIX_WORDS = {
    "safe": "Safe: applied by `cuda2rocm fix`; behaviour is unchanged on CUDA and correct on ROCm.",
    "unsafe": "Unsafe: applied only by `cuda2rocm fix --unsafe`; review the change.",
    "none": "None: diagnosis only, a human decides the change.",
}


def _fence(code: str, language: str) -> str:
    lang = "python" if language == "python" else "cpp" if language == "cuda" else ""
    return f"```{lang}\n{code.strip(chr(10))}\n```"


def render_markdown(spec: RuleSpec, level: int = 1) -> str:
    language = spec.languages[0]
    parts = [
        f"{'#' * level} {spec.id} ({spec.code})",
        f"*Step {spec.step}: {spec.step_name} · severity {spec.severity.value} · "
        f"{', '.join(spec.languages)}{'' if spec.default else ' · opt-in'}*",
        spec.summary,
        spec.explanation,
        f"**Fix safety.** {FIX_WORDS[spec.fix]}",
    ]
    for example in spec.invalid[:2]:
        parts.append(f"**Example** ({example.name}):")
        parts.append(_fence(example.code, language))
        if example.fixed is not None:
            parts.append("**After `cuda2rocm fix`:**")
            parts.append(_fence(example.fixed, language))
    if spec.valid:
        parts.append(f"**Not reported** ({spec.valid[0].name}):")
        parts.append(_fence(spec.valid[0].code, language))
    parts.append("**References**")
    parts.append("\n".join(f"- [{r.title}]({r.url})" for r in spec.references))
    return "\n\n".join(parts) + "\n"
