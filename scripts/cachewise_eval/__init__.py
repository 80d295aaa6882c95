"""cachewise_eval: the calibration and evaluation tool (scripts/cachewise_eval/README.md).

Every module runs as `PYTHONPATH=scripts python3 -m cachewise_eval.MODULE ARGS` from the
repository root; the tests as `python3 -m unittest discover -s scripts/cachewise_eval/tests -t scripts`.
"""
