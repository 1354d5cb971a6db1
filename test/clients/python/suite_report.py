"""One JSON line per operation, the shape test/clients/support/suite-report.ts reads.

    with operation('produce.gzip') as report:
        ...
        report(offsets=offsets)       # what the client saw; the test file asserts on it

An exception inside the block is reported as the operation's error and the suite goes on.
"""
import contextlib
import enum
import json
import sys
import time


@contextlib.contextmanager
def operation(name):
    data = {}
    started = time.monotonic()

    def report(**fields):
        data.update(fields)

    line = {'op': name}
    try:
        yield report
        line.update(ok=True, data=plain(data))
    except Exception as error:  # the client's own error is what the report is for
        line.update(ok=False, error='%s: %s' % (type(error).__name__, error))
    line['ms'] = round((time.monotonic() - started) * 1000)
    print(json.dumps(line), flush=True)


def plain(value):
    """JSON-able form of a client's answer: protocol structs, named tuples, enums, bytes."""
    if hasattr(value, 'to_object'):
        return plain(value.to_object())
    if isinstance(value, enum.Enum):
        return value.name
    if isinstance(value, (bytes, bytearray)):
        return value.decode('utf-8', 'replace')
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if hasattr(value, '_asdict'):
        return plain(value._asdict())
    if isinstance(value, (list, tuple, set)):
        return [plain(v) for v in value]
    if isinstance(value, type) and issubclass(value, BaseException):
        return value.__name__
    if isinstance(value, BaseException):
        return '%s: %s' % (type(value).__name__, value)
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return repr(value)
