-- The three kernels that took the most GPU time in each step, by the step that launched them.
SELECT step, step_name, kernel, calls, gpu_ns
FROM (
  SELECT s.step, st.name AS step_name, s.name AS kernel, count(*) AS calls, sum(s.dur) AS gpu_ns,
         row_number() OVER (PARTITION BY s.step ORDER BY sum(s.dur) DESC, s.name) AS rank
  FROM slice s JOIN step st ON st.id = s.step
  WHERE s.category = 'kernel'
  GROUP BY s.step, st.name, s.name
)
WHERE rank <= 3
ORDER BY step, rank;
