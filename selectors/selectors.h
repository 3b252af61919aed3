/* The selectors: schedulers that plan by predicting the other schedulers' plans and keeping
 * one (`auto`, selectors/auto.c). They need the simulator and the plan checker, which the
 * schedulers' layer does not link, so its registry (schedulers/registry.c) cannot name them:
 * this layer registers them there, after the schedulers of schedulers/, before anything looks
 * a scheduler up by name (docs/design.md#layers). */
#ifndef AV_SELECTORS_H
#define AV_SELECTORS_H

#include "core/error.h"

/* Registers every selector in the scheduler registry, once per process (pthread_once): any
 * number of calls from any threads make one registration, and every call returns after it.
 * The pipeline and the C API call it before they look a scheduler up by name or list them;
 * so does a program or test that uses the registry directly. Fails (AV_ERR_INTERNAL, on every
 * call) only if a selector's name is already taken. */
int av_selectors_register(av_error_t *err);

#endif
