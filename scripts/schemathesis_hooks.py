"""Hooks of the contract run (scripts/contract.sh, loaded by schemathesis.toml).

A JSON body with a `__proto__` key anywhere is refused by the body parser (400, prototype
poisoning) before any route sees it: that is deliberate and documented (docs/adr/0107-request-bodies.md). The
fuzzer draws such keys from its list of dangerous strings; this hook renames them so that a
generated body tests what its schema says instead of that one parser rule.
"""
import schemathesis


def _rename_proto(value):
    if isinstance(value, dict):
        return {("_proto_" if k == "__proto__" else k): _rename_proto(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_rename_proto(v) for v in value]
    return value


@schemathesis.hook
def map_body(context, body):
    return _rename_proto(body)
