"""The tests' fake HTTP server: :mod:`factcheck.testing.http`, the one fake server the package
ships, under the name the test files import it by."""

from factcheck.testing.http import FakeServer, InFlight, Request, Response, Route, serving

__all__ = ["FakeServer", "InFlight", "Request", "Response", "Route", "serving"]
