-- Gaps longer than 1 ms in which the GPU ran nothing (no kernel, copy or memset on any stream).
SET VARIABLE min_gap_ns = 1000000;
WITH work AS (
  SELECT ts, ts + dur AS te FROM slice
  WHERE category IN ('kernel', 'gpu_memcpy', 'gpu_memset') AND dur > 0
),
busy_until AS (
  -- the latest end of everything that started before this activity
  SELECT ts, max(te) OVER (ORDER BY ts, te ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_end
  FROM work
)
SELECT prev_end AS gap_start, ts AS gap_end, ts - prev_end AS gap_ns
FROM busy_until
WHERE ts - prev_end > getvariable('min_gap_ns')
ORDER BY gap_start;
