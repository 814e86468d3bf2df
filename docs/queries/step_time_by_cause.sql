-- Each step's time split by what the step waited for (the diagnosis's causes add up to the step).
SELECT step, step_name, label AS cause, cause_dur AS ns, round(100.0 * cause_dur / dur, 1) AS pct_of_step
FROM step_cause
ORDER BY step, cause_dur DESC, cause;
