"""HTTP API and web page over the library (``rag-lab serve ROOT``; see docs/server.md).

Needs the ``serve`` extra (starlette, uvicorn, watchfiles). Nothing here is imported
by the library; :func:`create_app` builds a fresh app per call.
"""

from rag_lab.server.app import create_app, run

__all__ = ["create_app", "run"]
