"""``airflow_blindata.openlineage.transport.BlindataTransport``: the transport's dotted path
before capture moved to ``airflow_blindata.capture``.

``[openlineage] transport`` settings and ``openlineage.yml`` files written for it keep working;
the listener recognises the class by what it is, not by the path it was named with.
"""

from airflow_blindata.capture.transport import BlindataTransport, BlindataTransportConfig

__all__ = ["BlindataTransport", "BlindataTransportConfig"]
