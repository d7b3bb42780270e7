"""Status and schedule codes of the kernels, for the Python side.

The enums are declared once, in ``_codes.pxd`` (``cpdef enum``): this
module exists so that they can be imported from Python, as the classes
``Status`` and ``Schedule`` whose members are the kernels' names
(``Status.STATUS_OVERFLOW``, ``Schedule.SCHEDULE_ADAGRAD``, ...).
"""
