"""Generated Python: `package` (the Jinja templates: `__init__`, `dispatch`, `handlers`),
`models` (argument models through datamodel-code-generator), `pysource` (the one escaping path
from user text to Python source).
"""
