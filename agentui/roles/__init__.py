"""The roles of roles-v0.8: R1 perceiver, R2 planner, R3 executor, R4a agent_validator, R4b meta_validator,
R6 auditor, R7 ggs."""
