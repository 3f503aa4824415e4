"""dreamloop: the agent loop of a coding agent, real, offline by default.
"""
