-- The op that launched each kernel (its runtime call's enclosing op), with the GPU time it queued.
SELECT name AS kernel, coalesce(op, '(no op)') AS op, count(*) AS calls, sum(dur) AS gpu_ns
FROM slice
WHERE category = 'kernel'
GROUP BY ALL
ORDER BY gpu_ns DESC, kernel, op;
