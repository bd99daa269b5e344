"""Recursive (online) estimators.
"""
