// The functions a sandboxed query may call, by the name the DuckDB parser records. This is an allow-list
// on purpose: a DuckDB upgrade that adds a function (a new file reader, a new setting accessor) leaves it
// refused until someone reviews it and adds it here. Everything that reads files or the network, changes
// or reveals settings, sleeps, reads the catalogue or sequences, or runs dynamic SQL is left out. So are
// scalar functions whose one result can dwarf their input (repeat, range, lpad, printf widths, ...): a
// single such call allocates before DuckDB checks for an interrupt, so the timeout could not stop it.
// The row-producing table functions range/generate_series/repeat stay: they stop at the timeout.

const SCALAR = `
! !__postfix !~~ !~~* % & && * ** + - -> ->> / // <-> << <=> <@ >> @ @> ^ ^@ | || ~ ~~ ~~* ~~~ = <> != < <= >
>= abs acos acosh add age alias apply array_aggr array_aggregate array_apply array_cat array_concat
array_contains array_cosine_distance array_cosine_similarity array_cross_product array_distance array_distinct
array_dot_product array_extract array_filter array_grade_up array_has array_has_all array_has_any
array_indexof array_inner_product array_intersect array_length array_negative_dot_product
array_negative_inner_product array_position array_reduce array_reverse_sort array_select array_slice
array_sort array_to_json array_transform array_unique array_value array_where array_zip ascii asin asinh atan
atan2 atanh base64 bin bit_count bit_length bit_position bitstring cardinality cbrt ceil ceiling century
char_length character_length chr concat concat_ws contains cos cosh cot damerau_levenshtein date_diff
date_part date_sub date_trunc datediff datepart datesub datetrunc day dayname dayofmonth dayofweek dayofyear
decade decode degrees divide editdist3 element_at encode ends_with epoch epoch_ms epoch_ns epoch_us
equi_width_bins era error even exp factorial filter flatten floor formatReadableDecimalSize formatReadableSize
format_bytes from_base64 from_binary from_hex from_json from_json_strict gamma gcd gen_random_uuid get_bit
greatest greatest_common_divisor grade_up hamming hash hex hour ilike_escape instr isfinite isinf isnan isodow
isoyear jaccard jaro_similarity jaro_winkler_similarity json_array json_array_length json_contains json_exists
json_extract json_extract_path json_extract_path_text json_extract_string json_keys json_merge_patch
json_object json_pretty json_quote json_structure json_transform json_transform_strict json_type json_valid
json_value julian last_day lcase lcm least least_common_multiple left left_grapheme len length length_grapheme
levenshtein lgamma like_escape list_aggr list_aggregate list_apply list_cat list_concat list_contains
list_cosine_distance list_cosine_similarity list_distance list_distinct list_dot_product list_element
list_extract list_filter list_grade_up list_has list_has_all list_has_any list_indexof list_inner_product
list_intersect list_negative_dot_product list_negative_inner_product list_pack list_position list_reduce
list_reverse_sort list_select list_slice list_sort list_transform list_unique list_value list_where list_zip
ln log log10 log2 lower ltrim make_date make_time make_timestamp make_timestamp_ms make_timestamp_ns
make_timestamptz map map_concat map_contains map_entries map_extract map_extract_value map_from_entries
map_keys map_values md5 md5_number microsecond millennium millisecond minute mismatches mod month monthname
multiply nanosecond nextafter nfc_normalize normalized_interval not_ilike_escape not_like_escape now
octet_length ord pi position pow power prefix quarter radians random reduce regexp_escape regexp_extract
regexp_extract_all regexp_full_match regexp_matches regexp_replace regexp_split_to_array replace reverse right
right_grapheme round row row_to_json rtrim second set_bit sha1 sha256 sign signbit sin sinh split sqrt
starts_with str_split str_split_regex strftime string_split string_split_regex string_to_array strip_accents
strlen strpos strptime struct_concat struct_contains struct_extract struct_extract_at struct_has
struct_indexof struct_insert struct_keys struct_pack struct_position struct_update struct_values substr
substring substring_grapheme subtract suffix tan tanh time_bucket timezone timezone_hour timezone_minute
to_base to_base64 to_binary to_centuries to_days to_decades to_hex to_hours to_json to_microseconds
to_millennia to_milliseconds to_minutes to_months to_quarters to_seconds to_timestamp to_weeks to_years today
transaction_timestamp translate trim trunc try_strptime typeof ucase unbin unhex unicode union_extract
union_tag union_value upper url_decode url_encode uuid uuid_extract_timestamp uuid_extract_version uuidv4
uuidv7 variant_extract variant_typeof week weekday weekofyear xor year yearweek ago array_append
array_pop_back array_pop_front array_prepend array_push_back array_push_front array_reverse array_to_string
date_add days_in_month fdiv fmod generate_subscripts json json_group_array json_group_object
json_group_structure list_any_value list_append list_approx_count_distinct list_avg list_bit_and list_bit_or
list_bit_xor list_bool_and list_bool_or list_count list_entropy list_first list_histogram list_kurtosis
list_kurtosis_pop list_last list_mad list_max list_median list_min list_mode list_prepend list_product
list_reverse list_sem list_skewness list_stddev_pop list_stddev_samp list_string_agg list_sum list_var_pop
list_var_samp map_contains_entry map_contains_value nullif round_even roundbankers split_part geomean
geometric_mean wavg weighted_avg coalesce ifnull unnest
`;

const AGGREGATE_AND_WINDOW = `
any_value approx_count_distinct approx_quantile approx_top_k arbitrary arg_max arg_max_null arg_max_nulls_last
arg_min arg_min_null arg_min_nulls_last argmax argmin array_agg avg bit_and bit_or bit_xor bitstring_agg bool_and
bool_or corr count count_if count_star countif covar_pop covar_samp cume_dist dense_rank entropy favg fill first
first_value fsum group_concat histogram histogram_exact kahan_sum kurtosis kurtosis_pop lag last last_value lead
list listagg mad max max_by mean median min min_by mode nth_value ntile percent_rank product quantile
quantile_cont quantile_disc rank rank_dense regr_avgx regr_avgy regr_count regr_intercept regr_r2 regr_slope
regr_sxx regr_sxy regr_syy reservoir_quantile row_number sem skewness stddev stddev_pop stddev_samp string_agg
sum sum_no_overflow sumkahan var_pop var_samp variance
`;

// Table functions that only generate rows from their arguments; none of them touches a file or the catalogue.
const TABLE = `range generate_series unnest repeat json_each json_tree`;

const words = (text: string) =>
  new Set(
    text
      .split(/\s+/)
      .filter(Boolean)
      .map((w) => w.toLowerCase()),
  );

export const allowedFunctions: ReadonlySet<string> = words(SCALAR + AGGREGATE_AND_WINDOW);
export const allowedTableFunctions: ReadonlySet<string> = words(TABLE);

/** Why a well-known function is refused, so the error can name the rule rather than just "not allowed". */
export function refusalReason(name: string): string {
  const n = name.toLowerCase();
  if (/^(read_|parquet_|sniff_csv|glob|iceberg|delta_|sqlite_|postgres_|mysql_)/.test(n) || n === 'query' || n === 'query_table') {
    return 'file, network and dynamic-SQL access is not allowed';
  }
  if (/sleep/.test(n)) return 'sleeping is not allowed';
  if (/^(range|generate_series|repeat|list_resize|array_resize|lpad|rpad|printf|format|bar)$/.test(n)) {
    return 'one call can build an unbounded value (use the range()/generate_series() table functions instead)';
  }
  if (/^(duckdb_|pragma_|pg_|has_.*privilege|information_schema|col_description|obj_description|shobj_description)/.test(n)) {
    return 'catalogue functions are not allowed';
  }
  if (/setting|getvariable|search_path|version|current_|user_agent|session_user|^user$/.test(n)) {
    return 'settings and session functions are not allowed';
  }
  if (/sleep/.test(n)) return 'sleeping is not allowed';
  if (/nextval|currval|setseed|write_log|checkpoint|logging|profiling/.test(n)) return 'functions with side effects are not allowed';
  return 'it is not on the sandbox allow-list';
}
