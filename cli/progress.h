/* progress.h - progress of long one-shot commands on stderr (cli/progress.c).
 *
 * gp_cli_progress_start makes a gp_progress (engine/progress.h) the calling thread's current one
 * and starts a reporter thread that polls it. When stderr is a terminal the reporter draws a bar
 * (stage, percentage, elapsed seconds) once the work has taken 0.5 s, redrawn in place and erased
 * at the end. Otherwise it writes a line "gpath: progress STAGE 42% after 6.0 s" every interval
 * (GPATH_PROGRESS_INTERVAL seconds, default 2) and, if it wrote any, "gpath: progress done after
 * 31.2 s" at the end - nothing for work shorter than the interval. Stages without counted units
 * (loading a graph, writing the answer) show the elapsed time only.
 */
#ifndef GP_CLI_PROGRESS_H
#define GP_CLI_PROGRESS_H

typedef struct gp_cli_progress gp_cli_progress;

/* enabled 0 (--quiet): the counter still exists but nothing is shown. NULL when out of memory
 * (then the command runs without progress). */
gp_cli_progress *gp_cli_progress_start(int enabled);
/* Starts a stage: resets the counter; label is a string that outlives the stage ("loading graph",
 * "apsp"). */
void gp_cli_progress_stage(gp_cli_progress *p, const char *label);
/* Erases a bar drawn on the terminal, so that a message written next starts on a clean line (the
 * bar is redrawn below it at the next tick). Called by the CLI's error writers; any thread. */
void gp_cli_progress_clear(void);
/* Stops the reporter, erases the bar / writes the closing line, clears the thread's current
 * progress, frees. Accepts NULL. */
void gp_cli_progress_stop(gp_cli_progress *p);

#endif
