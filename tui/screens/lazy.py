"""The screens the first frame does not show, imported when first opened.

Their modules bring widgets (``TextArea``, ``DataTable``, ``Switch``, radio sets) and the
runtime's pydantic models (the dialog's context lines) that cost more to import than the
first frame itself. The ``is_*`` tests look at a screen's type without importing anything:
a module not imported yet has no instance on the stack.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, TypeGuard

if TYPE_CHECKING:
    from tui.screens.approval import ApprovalModal
    from tui.screens.edit_args import EditArgsModal
    from tui.screens.error import ErrorModal
    from tui.screens.grant_choice import GrantChoiceModal
    from tui.screens.picker import PendingPicker
    from tui.screens.resume_form import ResumeFormModal


def _instance(obj: object, module: str, name: str) -> bool:
    loaded = sys.modules.get(module)
    return loaded is not None and isinstance(obj, getattr(loaded, name))


def is_approval(obj: object) -> TypeGuard[ApprovalModal]:
    return _instance(obj, "tui.screens.approval", "ApprovalModal")


def is_resume_form(obj: object) -> TypeGuard[ResumeFormModal]:
    return _instance(obj, "tui.screens.resume_form", "ResumeFormModal")


def is_picker(obj: object) -> TypeGuard[PendingPicker]:
    return _instance(obj, "tui.screens.picker", "PendingPicker")


def is_edit_args(obj: object) -> TypeGuard[EditArgsModal]:
    return _instance(obj, "tui.screens.edit_args", "EditArgsModal")


def is_grant_choice(obj: object) -> TypeGuard[GrantChoiceModal]:
    return _instance(obj, "tui.screens.grant_choice", "GrantChoiceModal")


def is_error(obj: object) -> TypeGuard[ErrorModal]:
    return _instance(obj, "tui.screens.error", "ErrorModal")


def is_call_dialog(obj: object) -> TypeGuard[ApprovalModal | ResumeFormModal]:
    """A dialog deciding one call: the approval dialog or the resume form."""
    return is_approval(obj) or is_resume_form(obj)
