"""Methods, matched by name whatever their receiver (an object of unknown type): which are safe,
which only on some receivers or with some arguments, which call their arguments, and the category
of a refused one."""

from __future__ import annotations

from ..categories import DELETES, NETWORK, OTHER_CODE, PROCESSES, SECRETS, SHELL, STATE, WRITES
from . import calls, words

#: Methods whose positional argument is called. ``agg``: a function, a method's name, or lists
#: and dicts of them; ``mapping``: a function or a mapping of values.
CALLABLE_METHODS = calls(
    "apply:0:agg agg:0:agg aggregate:0:agg transform:0:agg progress_apply:0:agg pipe:0:func "
    "applymap:0:func map_dataframe:0:func map_diag:0:func map_offdiag:0:func map_upper:0:func "
    "map_lower:0:func add_callback:0:func set_major_formatter:0:func combine:1:func "
    "set_minor_formatter:0:func mpl_connect:1:func map:0:mapping filter:0:mapping "
    "groupby:0:mapping where:0:mapping mask:0:mapping rename:0:mapping"
)

# -- methods ---------------------------------------------------------------------------------

#: Methods allowed on any receiver: what pandas (DataFrame, Series, Index, GroupBy, windows,
#: resamplers, the ``.str``/``.dt``/``.cat`` accessors, Timestamp), numpy (ndarray, Generator),
#: str, list, dict, set, tuple, numbers and matplotlib (Axes, Figure, Axis, Line2D, Text,
#: Legend, Colorbar) define, generated with ``dir()`` (pandas 3.1, numpy 2.4, matplotlib 3.11)
#: minus the writers (``to_csv``, ``savefig``, ``tofile``, ``dump``), ``put``, ``spawn``, the
#: getters and setters (``ACCESSOR_STEMS``) and the methods ruled in calls.py; then by
#: hand.
SAFE_METHODS = words(
    "T abs acorr add add_artist add_axes add_axobserver add_callback add_categories "
    "add_child_axes add_collection add_container add_gridspec add_image add_line add_lines "
    "add_patch add_prefix add_subfigure add_subplot add_suffix add_table align align_labels "
    "align_titles align_xlabels align_ylabels all angle_spectrum annotate any append apply_aspect "
    "argmax argmin argpartition argsort array arrow artists as_integer_ratio as_ordered as_unit "
    "as_unordered asfreq asi8 asm8 asof asof_locs assign astimezone astype at at_time attrs "
    "autocorr autofmt_xdate autoscale autoscale_view axes axhline axhspan axis axis_date axline "
    "axvline axvspan bar bar_label barbs barh base beta between between_time bfill binomial "
    "bit_count bit_generator bit_length boxplot broken_barh bxp bytes byteswap can_pan can_zoom "
    "capitalize case_when casefold cat categories ceil center chisquare choice choose cla clabel "
    "clf clip closed closed_left closed_right codes cohere collections colorbar columns "
    "combine_first compare components compress conj conjugate contains contains_point contour "
    "contourf convert_dtypes convert_units convert_xunits convert_yunits converter corr corrwith "
    "count cov csd ctime cumcount cummax cummin cumprod cumsum data date day day_name day_of_week "
    "day_of_year dayofweek dayofyear days days_in_month daysinmonth decode delaxes denominator "
    "describe device diagonal diff difference difference_update dirichlet div divide divmod dot "
    "dpi draw draw_artist draw_frame draw_without_rendering drop drop_duplicates droplevel dropna "
    "dst dt dtype dtypes dumps duplicated ecdf empty encode end_time endswith eq equal_levels "
    "equals errorbar eventplot ewm exclusions expanding expandtabs explode exponential extend "
    "extract extractall f factorize ffill figimage figure fill fill_between fill_betweenx fillna "
    "find findall findobj first first_valid_index flags flat flatten floor floordiv fold format "
    "format_coord format_cursor_data format_map format_xdata format_ydata formatter frameon freq "
    "freqstr from_arrays from_arrow from_bytes from_dict from_frame from_product from_records "
    "from_tuples fromhex fromisocalendar fromisoformat fromkeys fromordinal fromtimestamp "
    "fullmatch gamma gca ge geometric get getfield grid groupby grouped_bar groups gt gumbel "
    "has_data has_duplicates hasnans have_units head hex hexbin hist hist2d hlines hour "
    "hypergeometric iat identical idxmax idxmin iloc imag images imshow in_axes index "
    "indexer_at_time indexer_between_time indicate_inset indicate_inset_zoom indices "
    "infer_objects inferred_freq inferred_type insert inset_axes integers interpolate "
    "intersection intersection_update invert_xaxis invert_yaxis is_ is_dashed is_empty is_integer "
    "is_leap_year is_monotonic_decreasing is_monotonic_increasing is_month_end is_month_start "
    "is_normalized is_quarter_end is_quarter_start is_transform_set is_unique is_year_end "
    "is_year_start isalnum isalpha isascii isdecimal isdigit isdisjoint isetitem isidentifier "
    "isin islower isna isnull isnumeric isocalendar isoformat isoweekday isprintable isspace "
    "issubset issuperset istitle isupper item items itemsize iterrows itertuples join keys kurt "
    "kurtosis label_outer laplace last last_valid_index le left legend len length level levels "
    "levshape limit_range_for_scale lines list ljust loc locator locator_params logistic loglog "
    "lognormal logseries long_axis lower lstrip lt mT magnitude_spectrum majorTicks maketrans "
    "margins mask match matshow max mean median melt memory_usage merge microsecond microseconds "
    "mid min minorTicks minorformatter minorlocator minorticks_off minorticks_on minute mod mode "
    "month month_name mouseover mul multinomial multiply multivariate_hypergeometric "
    "multivariate_normal n_rasterize name names nanosecond nanoseconds nbytes ndim ne nearest "
    "negative_binomial ngroup ngroups nlargest nlevels noncentral_chisquare noncentral_f nonzero "
    "normal normalize notna notnull now nsmallest nth number numerator nunique ohlc online "
    "open_left open_right ordered ordinal overlaps pad pareto partition patches pchanged pcolor "
    "pcolorfast pcolormesh pct_change permutation permuted phase_spectrum pick pickable "
    "pickradius pie pie_label pivot pivot_table plot poisson pop popitem pow power prod product "
    "properties psd putmask quantile quarter quiver quiverkey qyear radd random rank ravel "
    "rayleigh rdiv rdivmod real recache recache_always redraw_in_frame reindex reindex_like relim "
    "remove_callback remove_categories remove_overlapping_locs remove_unused_categories "
    "remove_unused_levels removeprefix removesuffix rename_axis rename_categories "
    "reorder_categories reorder_levels repeat resample reset_index reset_position reset_ticks "
    "reshape resize resolution resolution_string reverse rfind rfloordiv right rindex rjust rmod "
    "rmul rolling round rpartition rpow rsplit rstrip rsub rtruediv sample sca scatter "
    "searchsorted second secondary_xaxis secondary_yaxis seconds select select_dtypes sem "
    "semilogx semilogy set setdefault setfield setflags shape sharex sharey shift show shuffle "
    "size skew slice slice_indexer slice_locs slice_replace snap sort sort_index sort_values "
    "sortlevel sparse specgram split splitlines spy squeeze stack stackplot stairs stale "
    "standard_cauchy standard_exponential standard_gamma standard_normal standard_t start_time "
    "startswith std stem step sticky_edges str streamplot strftime strides strip strptime struct "
    "style sub subfigures subplot_mosaic subplots subplots_adjust subtract sum suptitle supxlabel "
    "supylabel swapaxes swapcase swaplevel symmetric_difference symmetric_difference_update table "
    "tables tail take text texts tick_params ticklabel_format tight_layout time timestamp "
    "timetuple timetz title to_bytes to_datetime64 to_device to_dict to_flat_index to_frame "
    "to_julian_date to_list to_numpy to_period to_pydatetime to_pytimedelta to_records to_series "
    "to_timedelta64 to_timestamp to_xarray tobytes today tolist toordinal total_seconds trace "
    "translate transpose triangular tricontour tricontourf tripcolor triplot truediv twinx twiny "
    "tz tz_convert tz_localize tzinfo tzname uniform union unique unit unstack update "
    "update_bbox_position_size update_datalim update_default_handler_map update_from "
    "update_normal update_ticks update_units upper use_sticky_edges utcfromtimestamp utcnow "
    "utcoffset utctimetuple value value_counts values var view viewLim violin violinplot vlines "
    "vonmises wald week weekday weekofyear weibull where wrap xaxis_date xaxis_inverted xcorr xs "
    "yaxis_date yaxis_inverted year zfill zipf zorder "
) | words(
    # rules in calls.py: callable arguments, targets, modes, expressions
    "apply agg aggregate transform pipe applymap map filter combine progress_apply eval query "
    "info replace rename copy open to_csv to_json to_html to_latex to_markdown to_string to_typst "
    "to_xml to_parquet "
    # numpy's RandomState, hashes, scipy's sparse matrices and kernel density, pandas' calendars
    "rand randn randint random_integers random_sample seed get_state set_state tomaxint digest "
    "hexdigest toarray todense tocsr tocsc tocoo tolil getnnz evaluate integrate_box "
    "integrate_box_1d integrate_gaussian integrate_kde logpdf holidays rule_from_name "
    # scikit-learn, scipy.stats, statsmodels
    "fit predict predict_proba predict_log_proba decision_function fit_transform "
    "inverse_transform fit_predict score score_samples get_params set_params "
    "get_feature_names_out partial_fit staged_predict kneighbors summary summary2 conf_int "
    "f_test t_test wald_test get_prediction forecast get_forecast simulate rvs pdf cdf ppf "
    "sf isf logpdf logcdf logsf interval stats moment entropy expect support pmf logpmf "
    "summary_frame predict_interval "
    # seaborn grids, plotly figures
    "map_dataframe map_diag map_offdiag map_upper map_lower add_legend set_axis_labels "
    "set_titles set_xlabels set_ylabels refline despine plot_joint plot_marginals "
    "update_layout update_traces update_xaxes update_yaxes add_trace add_scatter add_bar "
    "add_hline add_vline add_hrect add_vrect add_annotation add_shape for_each_trace "
    "for_each_annotation "
    # collections, re patterns and matches, pandas' Styler
    "appendleft extendleft popleft rotate most_common elements total move_to_end search "
    "group groups groupdict span finditer subn end concat background_gradient text_gradient "
    "highlight_between highlight_max highlight_min highlight_null highlight_quantile "
    "format_index format_index_names relabel_index map_index apply_index hide export use "
    "set_caption set_properties set_sticky set_table_attributes set_table_styles "
    "set_td_classes set_tooltips set_uuid "
    # tqdm, files being read, paths, images
    "set_description set_postfix refresh read "
    "readline readlines seek tell close flush readable seekable getvalue exists is_file "
    "is_dir glob rglob iterdir resolve absolute with_suffix with_name with_stem relative_to "
    "joinpath expanduser read_text read_bytes as_posix as_uri samefile is_absolute "
    "is_relative_to crop convert thumbnail getpixel getdata getbands getextrema histogram "
    "point quantize rotate split resize "
    "setdefault"
)
#: matplotlib's getters and setters (``get_xlim``, ``set_title``), by what they get or set.
ACCESSOR_STEMS = words(
    "aa adjustable agg_filter alignment alpha anchor animated antialiased aspect autoscale_on "
    "autoscalex_on autoscaley_on axes axes_locator axis axis_off axis_on axisbelow "
    "backgroundcolor bbox bbox_patch bbox_to_anchor box_aspect c canvas categories children "
    "clip_box clip_on clip_path codes color constrained_layout constrained_layout_pads converter "
    "cursor_data dash_capstyle dash_joinstyle dashes data data_interval data_ratio "
    "default_bbox_extra_artists default_handler_map default_intervals dpi draggable drawstyle ds "
    "dummies edgecolor facecolor family fc figheight figure figwidth fillstyle flags font "
    "font_properties fontfamily fontfeatures fontname fontproperties fontsize fontstretch "
    "fontstyle fontvariant fontweight forward_navigation_events frame frame_on frameon gapcolor "
    "gid gridlines gridspec group ha horizontalalignment images in_layout index indexer "
    "indexer_for indexer_non_unique inverted label label_coords label_position label_text "
    "language layout_engine legend legend_handler legend_handler_map legend_handles_labels "
    "level_values levels lines linespacing linestyle linewidth loc loc_level locs ls lw ma "
    "major_formatter major_locator major_ticks majorticklabels majorticklines majorticklocs "
    "marker markeredgecolor markeredgewidth markerfacecolor markerfacecoloralt markersize "
    "markevery math_fontfamily mec mew mfc mfcalt minor_formatter minor_locator minor_ticks "
    "minorticklabels minorticklines minorticklocs minpos mouseover ms multialignment name names "
    "navigate navigate_mode ncols offset_text parse_math patches path path_effects picker "
    "pickradius position prop_cycle rasterization_zorder rasterized remove_overlapping_locs "
    "rotation rotation_mode scale shared_x_axes shared_y_axes size size_inches sketch_params "
    "slice_bound snap solid_capstyle solid_joinstyle stretch style subplotspec suptitle supxlabel "
    "supylabel text texts tick_padding tick_params tick_space ticklabels ticklines ticklocs ticks "
    "ticks_direction tight_layout tightbbox title transform transform_rotates_text "
    "transformed_clip_path_and_affine unitless_position units url usetex va variant "
    "verticalalignment view_interval visible weight window_extent wrap x xaxis "
    "xaxis_text1_transform xaxis_text2_transform xaxis_transform xbound xdata xgridlines "
    "xinverted xlabel xlim xmajorticklabels xmargin xminorticklabels xscale xticklabels "
    "xticklines xticks xydata y yaxis yaxis_text1_transform yaxis_text2_transform yaxis_transform "
    "ybound ydata ygridlines yinverted ylabel ylim ymajorticklabels ymargin yminorticklabels "
    "yscale yticklabels yticklines yticks zorder "
)
#: Methods allowed only with some arguments (their rules are in calls.py).
RULED_METHODS = words("eval query open info replace rename copy from_formula")
#: Methods that change the receiver in memory: allowed on values the cell made (a list of
#: columns), not on objects from elsewhere (``fs.remove(p)``, ``cache.clear()``).
MEMORY_METHODS = words("remove discard delete clear truncate")
#: Methods whose result is a new list, array or dict; path methods whose result is a path.
FRESH = words("tolist to_list copy keys values items split rsplit splitlines to_dict")
PATH_RESULTS = words(
    "with_suffix with_name with_stem resolve absolute joinpath expanduser relative_to glob "
    "rglob iterdir"
)
#: The methods of a pathlib path, a file open for reading, an in-memory buffer, a PIL image.
_FILE = "read readline readlines seek tell close readable seekable fileno namelist infolist "
_FILE += "getinfo getnames getmembers getmember extractfile open"
KIND_METHODS = {
    "path": words(
        "exists is_file is_dir is_symlink glob rglob iterdir resolve absolute with_suffix "
        "with_name with_stem relative_to joinpath expanduser read_text read_bytes as_posix "
        "as_uri samefile is_absolute is_relative_to match full_match stat lstat owner group "
        "walk open"
    ),
    "file": words(_FILE),
    "buffer": words(_FILE + " write writelines getvalue truncate"),
    "image": words(
        "resize crop convert rotate transpose thumbnail getpixel getdata getbands getextrema "
        "histogram point quantize split copy filter close"
    ),
}
#: ``to_csv()`` and its kind write only when given where to (without, they return text).
TARGET_WRITERS = words(
    "to_csv to_json to_html to_latex to_markdown to_string to_xml to_parquet to_typst"
)
#: The keywords that name where such a method writes.
TARGET_KEYWORDS = words(
    "path path_or_buf buf excel_writer fname file filename filepath_or_buffer con name store"
)
#: Callees whose string arguments are shown or searched, never fetched (URLs are fine there).
TEXT_CALLEES = words(
    "print display title set_title suptitle xlabel ylabel set_xlabel set_ylabel text annotate "
    "figtext legend Markdown HTML SVG JSON startswith endswith contains replace split rsplit "
    "strip lstrip rstrip removeprefix removesuffix find rfind index count match fullmatch "
    "extract extractall sub search findall compile urlparse urlsplit urljoin quote unquote format"
)
#: ``_repr_*_`` methods whose output the browser renders as HTML or runs.
RICH_REPRS = words(
    "_repr_html_ _repr_javascript_ _repr_markdown_ _repr_svg_ _repr_mimebundle_ _ipython_display_"
)

#: Method names by category.
METHOD_LABELS = {
    WRITES: words(
        "to_csv to_excel to_parquet to_pickle to_hdf to_sql to_stata to_feather to_orc "
        "to_clipboard to_json to_html to_latex to_markdown to_xml to_string to_netcdf to_zarr "
        "to_gbq to_iceberg tofile dump savefig save save_npz write write_text write_bytes "
        "writelines write_html write_image write_csv write_parquet write_json touch mkdir "
        "symlink_to hardlink_to link_to extractall extract addfile chmod commit"
    ),
    DELETES: words("unlink rmdir rmtree remove delete"),
    SHELL: words("system popen"),
    NETWORK: words(
        "urlopen request send sendall sendto connect post put patch download upload "
        "install_extension serve"
    ),
    OTHER_CODE: words(
        "loads load run_cell run_line_magic run_cell_magic execute executemany executescript "
        "sql load_extension enable_load_extension LoadLibrary dlopen load_library "
        "load_op_library"
    ),
    STATE: words("chdir"),
    PROCESSES: words("start kill terminate"),
    SECRETS: words(
        "get_secret get_secret_value get_password get_credential get_credentials "
        "get_frozen_credentials"
    ),
}
