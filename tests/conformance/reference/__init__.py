"""The op families of make_reference.py, one module each; common.py holds
what they all share."""
