"""The experience memory: corrections in, precedents out (docs/learning.md)."""
