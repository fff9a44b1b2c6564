// @openmanus/flow: the planning tool and PlanningFlow.
