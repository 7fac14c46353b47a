"""Verifiers. Built-ins: ``lexical`` (the transparent offline baseline)."""
