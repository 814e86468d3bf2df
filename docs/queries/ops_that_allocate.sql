-- The ops that allocate the most memory: every allocation counted once, for the op running on its
-- thread when it was made, per device.
SELECT coalesce(s.op, '(no op)') AS op,
       CASE WHEN t.int_value = 0 THEN 'CPU' ELSE 'GPU ' || coalesce(d.int_value, -1) END AS device,
       count(*) AS allocations, sum(b.int_value) AS bytes
FROM slice s
JOIN args b ON b.arg_set_id = s.arg_set_id AND b.key = 'args.Bytes'
LEFT JOIN args t ON t.arg_set_id = s.arg_set_id AND t.key = 'args.Device Type'
LEFT JOIN args d ON d.arg_set_id = s.arg_set_id AND d.key = 'args.device'
WHERE s.category = 'memory' AND b.int_value > 0
GROUP BY ALL
ORDER BY bytes DESC, op, device
LIMIT 10;
