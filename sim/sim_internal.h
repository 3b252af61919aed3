/* Internals of the simulator shared by its files: the two models behind av_sim_run. Both
 * take exactly av_sim_run's arguments; sim.c validates them and dispatches on cfg->model. */
#ifndef AV_SIM_INTERNAL_H
#define AV_SIM_INTERNAL_H

#include "sim/sim.h"

/* The quick closed-form model (sim/sim_waves.c). */
int av__sim_waves(const av_sim_config_t *cfg, const av_sim_input_t *in, av_sim_result_t *out,
                  av_timeline_t *tl, av_error_t *err);

/* The event-driven model (sim/engine.c). */
int av__sim_engine(const av_sim_config_t *cfg, const av_sim_input_t *in, av_sim_result_t *out,
                   av_timeline_t *tl, av_error_t *err);

#endif
