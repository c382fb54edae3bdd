/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * lib/ - what every layer above mm/ shares for the files it is handed:
 * output files written without destroying what was there (outfile.c),
 * input files read with a stated bound (readfile.c), any text made text
 * that XML carries (xmltext.c: the SVGs draw file names and rows'
 * fields), and a signal sent again once its handler cleaned up
 * (resignal.c).  Nothing here knows a scenario, a backend or a command.
 */
#ifndef PTEBATCH_LIB_H
#define PTEBATCH_LIB_H

#endif
