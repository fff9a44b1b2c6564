// @openmanus/tools: every OpenManus tool beyond the Manus four, and the agent presets that use them.
